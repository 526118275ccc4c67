// The one typed result of a speed test and of an RPM test (what `--json` prints) and the figures built from it; its parsers are report-parse.ts and report-read.ts.
//
// `netdiag speedtest --json` and `netdiag rpm --json` print these shapes (openapi/*-report.v1.schema.json
// publish them, report-schema.ts is their source); the monitor reads a run through
// readSpeedTestReport / readRpmReport (report-parse.ts), and the page's results and the share codec convert to and from
// SpeedTestFigures here. No DOM and no Node: the page, the command line and the monitor share it.
import type { Confidence } from '../responsiveness/rpm.js';
import { bufferbloat, worseLoaded } from './bufferbloat.js';
import type { Quality } from './latency-quality.js';
import type { FIGURE_NAMES } from './report-schema.js';
import { decodeResult, encodeResult, type SharedResult } from './share.js';

/** The version every report carries (`schema_version`) and the schemas' `$id` names. */
export const REPORT_SCHEMA_VERSION = 1;
/** `netdiag rpm --json`'s: 2 since its figure follows the draft's formula and carries its components. */
export const RPM_REPORT_SCHEMA_VERSION = 2;

type QualityClass = Quality | 'pending';
type BufferbloatGrade = NonNullable<ReturnType<typeof bufferbloat>>['grade'];
type RpmRating = 'poor' | 'fair' | 'good' | 'excellent';

/** The burst before a direction's sustained rate. */
export interface BurstReport {
  peak_mbps: number;
  bytes: number;
  duration_ms: number;
}

/** What a direction's rate rests on: its streams, its window (seconds from the direction's start) and the rates of each interval. */
export interface MeasuredReport {
  streams: number;
  window_s: [number, number];
  steady: boolean;
  bytes: number;
  loaded_round_trips: number;
  resent_round_trips: number;
  rates_mbps: number[];
}

/**
 * The bytes the whole test moved each way, every exchange of it (round trips, bursts, warm-up,
 * measured windows, a direction measured again after a 429), counted at its connections, headers
 * included: what a data cap counts, not only `measured.*.bytes`.
 */
export interface BytesMovedReport {
  down: number;
  up: number;
}

/** `netdiag speedtest --json`: every figure present, null where nothing was measured. */
export interface SpeedTestReport {
  schema_version: typeof REPORT_SCHEMA_VERSION;
  mode: string;
  download_mbps: number | null;
  upload_mbps: number | null;
  download_burst: BurstReport | null;
  upload_burst: BurstReport | null;
  latency_ms: number | null;
  jitter_ms: number | null;
  download_loaded_latency_ms: number | null;
  upload_loaded_latency_ms: number | null;
  loaded_latency_increase_ms: number | null;
  bufferbloat_grade: BufferbloatGrade | null;
  bufferbloat_meaning: string | null;
  packet_loss_percent: number | null;
  packet_loss: { server: string; sent: number; received: number } | null;
  streaming_quality: QualityClass;
  gaming_quality: QualityClass;
  video_call_quality: QualityClass;
  duration_ms: number;
  requests: number;
  bytes_moved: BytesMovedReport;
  rate_limit_waits: number;
  rate_limit_waited_ms: number;
  measured: { download: MeasuredReport | null; upload: MeasuredReport | null };
  notes: string[];
  /** With --share only. */
  share_link?: string;
  /** With --server only. */
  server?: ServerReport;
}

/** The server a speed test measured against (`--server`): its name in the list, its URL, and the round trip that chose it (auto). */
export interface ServerReport {
  name: string | null;
  url: string;
  round_trip_ms: number | null;
}

/** One direction of `netdiag rpm --json`. */
export interface RpmDirectionReport {
  rpm: number | null;
  rpm_p90: number | null;
  mbps: number;
  connections: number;
  connections_failed: number;
  intervals: number;
  stable: boolean;
  goodput_stable: boolean;
  responsiveness_stable: boolean;
  confidence: Confidence;
  probes: { foreign: number; self: number; lost: number };
  components: RpmComponentsReport;
  duration_ms: number;
}

/** Each probe kind's trimmed mean over the probes a figure rests on, ms: a new connection's per round trip, its handshakes and exchange, a loaded connection's exchange. */
export interface RpmComponentsReport {
  foreign_ms: number | null;
  tcp_ms: number | null;
  tls_ms: number | null;
  http_ms: number | null;
  self_ms: number | null;
}

/** `netdiag rpm --json`. */
export interface RpmReport {
  schema_version: typeof RPM_REPORT_SCHEMA_VERSION;
  rpm: number | null;
  rpm_p90: number | null;
  rating: RpmRating | null;
  download_rpm: number | null;
  upload_rpm: number | null;
  download_mbps: number;
  upload_mbps: number;
  stable: boolean;
  confidence: Confidence;
  components: RpmComponentsReport;
  download: RpmDirectionReport;
  upload: RpmDirectionReport;
  bytes_moved: BytesMovedReport;
}

/** The three experiences' classes, by the report's names (without `_quality`). */
export type QualityClasses = Record<'streaming' | 'gaming' | 'video_call', QualityClass>;

/** The page's bufferbloat (its result and its export): the report's grade and increase, together. */
export interface PageBufferbloat {
  grade: BufferbloatGrade;
  increase_ms: number;
}

/** The figures a speed test is judged and kept by: what a monitor's expectations name and a page result carries. */
export type SpeedTestFigures = Pick<SpeedTestReport, (typeof FIGURE_NAMES)[number]>;

/** The bufferbloat a report gives: the worse direction under load against the idle latency (bufferbloat.ts, both files). */
export function bloatOf(idleMs: number | undefined, loadedDownMs: number | undefined, loadedUpMs: number | undefined): ReturnType<typeof bufferbloat> {
  return bufferbloat(idleMs, worseLoaded(loadedDownMs, loadedUpMs));
}

const mbpsOf = (bps: number | undefined) => (bps === undefined ? null : bps / 1e6);

/** A kept result (a share link's, the page's history's) as a report's figures, at the result's own precision. */
export function figuresOfShared(result: SharedResult): SpeedTestFigures {
  const bloat = bloatOf(result.latencyMs, result.loadedDownMs, result.loadedUpMs);
  return {
    mode: result.mode,
    download_mbps: mbpsOf(result.downloadBps),
    upload_mbps: mbpsOf(result.uploadBps),
    latency_ms: result.latencyMs ?? null,
    jitter_ms: result.jitterMs ?? null,
    download_loaded_latency_ms: result.loadedDownMs ?? null,
    upload_loaded_latency_ms: result.loadedUpMs ?? null,
    loaded_latency_increase_ms: bloat?.increaseMs ?? null,
    bufferbloat_grade: bloat?.grade ?? null,
    packet_loss_percent: result.lossPercent ?? null,
  };
}

/**
 * A report's figures as a kept result at `at` (ms since the epoch), through the share codec and
 * back (its bounds and precision, the time to the second); undefined for a mode the codec has no
 * letter for or a figure past its bounds.
 */
export function sharedOfFigures(f: SpeedTestFigures, at: number): SharedResult | undefined {
  if (f.mode !== 'light' && f.mode !== 'full') return undefined;
  const result: SharedResult = { at, mode: f.mode };
  const set = (key: 'downloadBps' | 'uploadBps' | 'latencyMs' | 'jitterMs' | 'loadedDownMs' | 'loadedUpMs' | 'lossPercent', value: number | null) => {
    if (value !== null) result[key] = value;
  };
  set('downloadBps', f.download_mbps === null ? null : f.download_mbps * 1e6);
  set('uploadBps', f.upload_mbps === null ? null : f.upload_mbps * 1e6);
  set('latencyMs', f.latency_ms);
  set('jitterMs', f.jitter_ms);
  set('loadedDownMs', f.download_loaded_latency_ms);
  set('loadedUpMs', f.upload_loaded_latency_ms);
  set('lossPercent', f.packet_loss_percent);
  const checked = decodeResult(encodeResult(result));
  return checked.ok ? checked.result : undefined;
}
