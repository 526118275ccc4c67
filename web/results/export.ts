// What the page's Export buttons write, as plain text: a finished speed test (its figures, what
// each direction's load counted and timed, and every round trip) and a watch's polls, as JSON and
// CSV. No DOM here, so each format is unit-tested on its own (test/page/export.test.ts);
// `download` hands the text over.
import { csvRows } from '../../src/common/csv.js';
import type { Poll } from '../../src/common/series.js';
import type { PageBufferbloat, QualityClasses } from '../../src/common/speedtest/report.js';
import type { SharedResult } from '../../src/common/speedtest/share.js';
import type { LoadRun } from '../../src/common/speedtest/load-loop.js';
import { INTERVAL_MS } from '../../src/common/speedtest/working.js';

/**
 * A direction's load as it ran (web/speedtest/working-load.ts): the counts and round trips exactly as the
 * page gave them to measureDirection (src/common/speedtest/working.ts), when it stopped, and what
 * the rules read, so a reader can apply the rules to the export and get the page's figures.
 */
export type MeasuredExport = Pick<LoadRun, 'streams' | 'progress' | 'roundTrips' | 'endMs' | 'measure'>;

/** What a test was measured against and with: the listed server (none for this page's own origin), the origin, the streams, the family when one was chosen. */
export interface TestSetup {
  server: { name: string; url: string; location: string } | null;
  origin: string;
  streams: number;
  family: 'ipv4' | 'ipv6' | null;
}

/** Everything a finished test measured, as the page keeps it until the next test or the tab closes. */
export interface TestExport {
  shared: SharedResult;
  setup: TestSetup;
  measured: { download: MeasuredExport | null; upload: MeasuredExport | null };
  /** The speed-test library's idle round trips, and those of each direction's window. */
  roundTrips: { idle: readonly number[]; loadedDown: readonly number[]; loadedUp: readonly number[] };
  loss: { sent: number; lost: number } | null;
  classes: QualityClasses;
  bufferbloat: PageBufferbloat | null;
}

const mbps = (bps: number | undefined) => (bps === undefined ? null : bps / 1e6);
const orNull = (v: number | undefined) => v ?? null;

/** The figures of a test, by name, with their units in the names. */
function figures(t: TestExport) {
  const s = t.shared;
  return {
    download_mbps: mbps(s.downloadBps),
    upload_mbps: mbps(s.uploadBps),
    latency_ms: orNull(s.latencyMs),
    jitter_ms: orNull(s.jitterMs),
    loaded_latency_down_ms: orNull(s.loadedDownMs),
    loaded_latency_up_ms: orNull(s.loadedUpMs),
    packet_loss_percent: orNull(s.lossPercent),
    // An estimate from the round trips under load (docs/api.md, "The page and the speed test").
    responsiveness_rpm_estimate: orNull(s.rpm),
  };
}

/** A direction in the export's words: its window and rates, and the raw counts and round trips (ms since it began) as pairs. */
function loadJson(m: MeasuredExport | null) {
  if (m === null) return null;
  const s = m.measure.sustained;
  return {
    streams: m.streams,
    end_ms: m.endMs,
    window_ms: s === undefined ? null : [s.startMs, s.endMs],
    steady: s?.steady ?? null,
    bytes: s?.bytes ?? null,
    // Round trips of the window left out of the loaded latency: they waited for a retransmission (working.ts).
    resent_round_trips: m.measure.loaded?.resent ?? null,
    rates_mbps: m.measure.rates.map((bps) => bps / 1e6),
    progress: m.progress.map((p) => [p.atMs, p.bytes]),
    round_trips: m.roundTrips.map((r) => [r.atMs, r.ms]),
  };
}

export function testJson(t: TestExport): string {
  return JSON.stringify(
    {
      tested_at: new Date(t.shared.at).toISOString(),
      mode: t.shared.mode,
      server: t.setup.server,
      origin: t.setup.origin,
      streams: t.setup.streams,
      family: t.setup.family,
      figures: figures(t),
      bufferbloat: t.bufferbloat,
      classes: t.classes,
      packet_loss: t.loss,
      measured: { download: loadJson(t.measured.download), upload: loadJson(t.measured.upload) },
      round_trips_ms: { idle: t.roundTrips.idle, loaded_down: t.roundTrips.loadedDown, loaded_up: t.roundTrips.loadedUp },
    },
    null,
    2,
  );
}

const csv = csvRows;

/** One table: a row per figure, then a row per quarter second of each direction's load and per round trip. */
export function testCsv(t: TestExport): string {
  const rows: (string | number | null)[][] = [['kind', 'name', 'bytes', 'duration_ms', 'value', 'unit']];
  // What the test ran against and with, before its figures.
  rows.push(['setting', 'server', null, null, t.setup.server?.name ?? null, null], ['setting', 'origin', null, null, t.setup.origin, null], ['setting', 'streams', null, null, t.setup.streams, null], ['setting', 'family', null, null, t.setup.family, null]);
  for (const [name, value] of Object.entries(figures(t))) rows.push(['figure', name, null, null, value, name.endsWith('_mbps') ? 'Mbit/s' : name.endsWith('_ms') ? 'ms' : name.endsWith('_rpm_estimate') ? 'RPM' : '%']);
  for (const [direction, m] of [['download', t.measured.download], ['upload', t.measured.upload]] as const) {
    for (const bps of m?.measure.rates ?? []) rows.push(['interval', direction, null, INTERVAL_MS, bps / 1e6, 'Mbit/s']);
  }
  for (const [name, list] of [['idle', t.roundTrips.idle], ['loaded_down', t.roundTrips.loadedDown], ['loaded_up', t.roundTrips.loadedUp]] as const) {
    for (const ms of list) rows.push(['round_trip', name, null, null, ms, 'ms']);
  }
  return csv(rows);
}

/** A watch's polls, one row each, in the order they were made. */
export function watchCsv(polls: readonly Poll[]): string {
  return csv([['time', 'target', 'rtt_ms', 'status'], ...polls.map((p) => [new Date(p.at).toISOString(), p.target, p.rtt_ms, p.status])]);
}

export function watchJson(polls: readonly Poll[]): string {
  return JSON.stringify(polls.map((p) => ({ time: new Date(p.at).toISOString(), target: p.target, rtt_ms: p.rtt_ms, status: p.status })), null, 2);
}

/** `netdiag-<what>-2026-11-25-18-00-00.<ext>`: what it holds and when (UTC), safe on every file system. */
export const fileName = (what: string, at: number, ext: string): string => `netdiag-${what}-${new Date(at).toISOString().slice(0, 19).replace(/[:T]/g, '-')}.${ext}`;

/** Hands `text` to the browser as a file download; nothing leaves the page. */
export function download(name: string, type: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => {
    URL.revokeObjectURL(url);
  }, 10_000);
}
