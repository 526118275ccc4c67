// `netdiag speedtest`: a mode of the configuration run from Node under working conditions
// (speedtest/run.ts), a progress bar on a terminal, the result as a table or JSON, and the
// analytics events the configuration advertises with `source: "cli"` (the API contract), unless
// --no-analytics.
import { checkPlan } from './plan.js';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import cliProgress from 'cli-progress';
import { ApiFailure, type Client } from '../api/client.js';
import { pairs, print, printJson, type Output } from '../terminal/output.js';
import { terminalText } from '../terminal/terminal-text.js';
import { qualitiesOf, type Figures } from '../../common/speedtest/latency-quality.js';
import { bloatOf, REPORT_SCHEMA_VERSION, type BurstReport, type MeasuredReport, type ServerReport, type SpeedTestReport } from '../../common/speedtest/report.js';
import type { Schemas } from '../../generated/openapi-types.js';
import { RateLimited, SpeedTestFailure, SpeedTestRun, type DirectionResult, type LimitWait, type RunProgress, type Result } from './run.js';
import { RATE_LIMITED_EXIT, waitingLine } from '../api/rate-limit.js';
import { profileOf, STREAMS, type Burst } from '../../common/speedtest/working.js';
import { packetLoss, type PacketLoss } from './loss.js';
import { TOOL_VERSION } from '../program/version.js';
import { shareLink } from '../../common/speedtest/share.js';

export interface SpeedTestOptions {
  mode: string;
  /** Parallel streams a direction loads the link with (`--streams`, 1..MAX_STREAMS; STREAMS when not given). */
  streams?: number;
  analytics: boolean;
  /** Measure packet loss through the deployment's TURN server after the transfers. */
  packetLoss: boolean;
  /** Print a link to the deployment's page carrying the result (`--share`), with the caller's address when `shareAddress`. */
  share: boolean;
  shareAddress: boolean;
  /** The server `--server` chose, named in the report (src/cli/choose/). */
  server?: ServerReport;
}

/** Exit status after an interrupt (128 + SIGINT), as shells report it. */
const CANCELLED_EXIT = 130;

const round2 = (v: number | undefined) => (v === undefined ? undefined : Math.round(v * 100) / 100);
const mbps = (bps: number | undefined) => round2(bps === undefined ? undefined : bps / 1e6);

function formatMbps(value: number | undefined): string {
  if (value === undefined) return '-';
  return `${value.toFixed(value < 10 ? 2 : value < 1000 ? 1 : 0)} Mbps`;
}
const formatMs = (value: number | undefined) => (value === undefined ? '-' : `${value.toFixed(value < 10 ? 2 : 1)} ms`);

/** A burst as --json gives it: null when the link gave none. */
const burstJson = (b: Burst | undefined): BurstReport | null => (b === undefined ? null : { peak_mbps: mbps(b.peakBps) ?? 0, bytes: b.bytes, duration_ms: Math.round(b.durationMs) });

const seconds = (ms: number) => Math.round(ms / 10) / 100;

/**
 * What a direction's figure rests on (--json `measured`): its streams, the window in seconds
 * from the direction's start, whether the rate was steady there, the bytes moved in it, the round
 * trips that came back within it, and the rate of each interval from the start (working.ts
 * INTERVAL_MS), for a script that wants to see the ramp and the window itself.
 */
function measuredJson(d: DirectionResult | undefined): MeasuredReport | null {
  const s = d?.measure.sustained;
  if (d === undefined || s === undefined) return null;
  const window: [number, number] = [seconds(s.startMs), seconds(s.endMs)];
  return {
    streams: d.streams,
    window_s: window,
    steady: s.steady,
    bytes: Math.round(s.bytes),
    loaded_round_trips: d.measure.loaded?.count ?? 0,
    resent_round_trips: d.measure.loaded?.resent ?? 0,
    rates_mbps: d.measure.rates.map((bps) => Math.round(bps / 1e5) / 10),
  };
}
/** How a direction was measured, in words: `4 streams, steady 5.0 s`, `1 stream, steady 5.0 s` or `4 streams; the rate did not settle: the last 5.0 s`. */
function basisText(m: MeasuredReport): string {
  const length = `${(m.window_s[1] - m.window_s[0]).toFixed(1)} s`;
  const streams = `${String(m.streams)} stream${m.streams === 1 ? '' : 's'}`;
  return m.steady ? `${streams}, steady ${length}` : `${streams}; the rate did not settle: the last ${length}`;
}

/** A rate with the burst before it and what it rests on: `19.1 Mbps sustained (burst: 38.1 Mbps for the first 3.8 MB; 4 streams, steady 5.0 s)`. */
function rateText(value: number | null, burst: BurstReport | null, measured: MeasuredReport | null): string {
  const rate = formatMbps(value ?? undefined);
  if (measured === null) return rate;
  return burst === null
    ? `${rate} (${basisText(measured)})`
    : `${rate} sustained (burst: ${formatMbps(burst.peak_mbps)} for the first ${(burst.bytes / 1e6).toFixed(1)} MB; ${basisText(measured)})`;
}

/** A result's figures, as a share link carries them and the quality classes read them. */
function shareFiguresOf(r: Result, loss: PacketLoss): Figures {
  return {
    downloadBps: r.download?.measure.sustained?.bps,
    uploadBps: r.upload?.measure.sustained?.bps,
    latencyMs: r.latency,
    jitterMs: r.jitter,
    loadedDownMs: r.downLoadedLatency,
    loadedUpMs: r.upLoadedLatency,
    lossPercent: loss.measured ? loss.lossPercent : undefined,
  };
}

/** Why a direction gave no loaded latency, or undefined when it gave one. */
function noLoadedLatency(name: 'download' | 'upload', d: DirectionResult | undefined): string | undefined {
  if (d === undefined) return `the plan has no ${name}`;
  if (d.measure.sustained === undefined) return `no ${name} byte was counted`;
  if (d.measure.loaded === undefined) return `no round trip sent during the ${name} window came back before the window ended`;
  return undefined;
}

/** Why there is no bufferbloat grade: no idle latency, or no loaded latency either way. */
function noBufferbloat(r: Result): string {
  if (r.latency === undefined) return 'the plan has no idle latency to compare with';
  const why = [noLoadedLatency('download', r.download), noLoadedLatency('upload', r.upload)].filter((w) => w !== undefined);
  return why.join('; ');
}

/** The notes a result carries: what is missing or rough, and why. */
function notesOf(mode: string, r: Result, loss: PacketLoss): string[] {
  const notes: string[] = [];
  const { maxMs } = profileOf(mode);
  for (const [name, d] of [['download', r.download], ['upload', r.upload]] as const) {
    const s = d?.measure.sustained;
    if (s !== undefined && !s.steady) {
      notes.push(`the ${name} rate did not settle within ${String(maxMs / 1000)} s, so its figure is the average of the last ${((s.endMs - s.startMs) / 1000).toFixed(1)} s`);
    }
  }
  const down = noLoadedLatency('download', r.download);
  const up = noLoadedLatency('upload', r.upload);
  if (down !== undefined && up !== undefined) notes.push(`${down}; ${up}: so there is no loaded latency and the quality classes stay pending`);
  else if (down !== undefined && r.download !== undefined) notes.push(`${down}, so there is no download loaded latency`);
  else if (up !== undefined && r.upload !== undefined) notes.push(`${up}, so there is no upload loaded latency`);
  if (!loss.measured) notes.push(`packet loss ${loss.untrusted === true ? 'not trustworthy' : 'not measured'}: ${loss.reason}`);
  const { count, ms } = r.limitWaits;
  if (count > 0) notes.push(`the server's rate limit refused ${count === 1 ? 'a request' : `requests ${String(count)} times`} (429): the test waited ${(ms / 1000).toFixed(0)} s in all, as the server asked, and measured again what the refusal cut; the duration includes the wait`);
  return notes;
}

/** The result as scripts get it (--json): every field present, null where nothing was measured. */
function report(mode: string, r: Result, loss: PacketLoss): SpeedTestReport {
  const classes = qualitiesOf(shareFiguresOf(r, loss));
  const bloat = bloatOf(r.latency, r.downLoadedLatency, r.upLoadedLatency);
  return {
    schema_version: REPORT_SCHEMA_VERSION,
    mode,
    download_mbps: mbps(r.download?.measure.sustained?.bps) ?? null,
    upload_mbps: mbps(r.upload?.measure.sustained?.bps) ?? null,
    download_burst: burstJson(r.download?.measure.burst),
    upload_burst: burstJson(r.upload?.measure.burst),
    latency_ms: round2(r.latency) ?? null,
    jitter_ms: round2(r.jitter) ?? null,
    download_loaded_latency_ms: round2(r.downLoadedLatency) ?? null,
    upload_loaded_latency_ms: round2(r.upLoadedLatency) ?? null,
    loaded_latency_increase_ms: round2(bloat?.increaseMs) ?? null,
    bufferbloat_grade: bloat?.grade ?? null,
    bufferbloat_meaning: bloat?.meaning ?? null,
    packet_loss_percent: loss.measured ? round2(loss.lossPercent) ?? null : null,
    packet_loss: loss.measured ? { server: loss.server, sent: loss.sent, received: loss.received } : null,
    streaming_quality: classes.streaming,
    gaming_quality: classes.gaming,
    video_call_quality: classes.video_call,
    duration_ms: Math.round(r.durationMs),
    requests: r.requests,
    bytes_moved: { down: r.moved.down, up: r.moved.up },
    rate_limit_waits: r.limitWaits.count,
    rate_limit_waited_ms: Math.round(r.limitWaits.ms),
    measured: { download: measuredJson(r.download), upload: measuredJson(r.upload) },
    notes: notesOf(mode, r, loss),
  };
}

/**
 * NETDIAG_SPEEDTEST_RECORD=<path>, a test and benchmark aid, not a user option: writes each
 * direction's raw counts and round trips as `{ "download": { "progress": [[atMs, bytes], ...],
 * "round_trips": [[atMs, ms], ...], "end_ms": N }, "upload": {...} }`, the series the rules'
 * unit tests read (test/fixtures/speedtest/loopback-cli.json, src/common/speedtest/working.test.ts).
 */
function record(path: string, r: Result): void {
  const series = (d: DirectionResult | undefined) =>
    d === undefined
      ? null
      : {
          progress: d.series.progress.map((p) => [Math.round(p.atMs * 100) / 100, p.bytes]),
          round_trips: d.series.roundTrips.map((t) => [Math.round(t.atMs * 100) / 100, Math.round(t.ms * 1000) / 1000]),
          end_ms: Math.round(d.series.endMs * 100) / 100,
        };
  writeFileSync(path, `${JSON.stringify({ download: series(r.download), upload: series(r.upload) })}\n`);
}

/** A bar on standard error when it is a terminal; nothing otherwise (pipes, files, CI logs). */
function progressBar(): { update(p: RunProgress): void; say(line: string): void; stop(): void } {
  const write = (line: string) => process.stderr.write(`${line}\n`);
  if (!process.stderr.isTTY) return { update: () => undefined, say: write, stop: () => undefined };
  const bar = new cliProgress.SingleBar(
    { stream: process.stderr, format: ' {bar} {percentage}% | {phase}', hideCursor: true, clearOnComplete: true, barsize: 30 },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  return {
    update(p) {
      if (!started) {
        bar.start(p.total, p.done, { phase: p.phase });
        started = true;
      }
      bar.setTotal(p.total);
      bar.update(p.done, { phase: p.phase });
    },
    // A line said while the bar is drawn takes the bar's line (cleared first); the bar is drawn again below it at its next update.
    say: (line) => {
      if (started) process.stderr.write('\r\x1b[2K');
      write(line);
    },
    stop: () => {
      if (started) bar.stop();
      started = false;
    },
  };
}

type Configuration = Schemas['SpeedTestConfiguration'];
type Send = (event: Schemas['EventName'], properties: Record<string, string | number | undefined>) => Promise<void>;

/** The deployment's plan for the mode asked for, checked, and the largest transfer it takes. */
async function planOf(client: Client, modeId: string): Promise<{ config: Configuration; mode: Configuration['modes'][number]; maxBytesPerRequest: number }> {
  const config = await client.get<Configuration>('/v1/speed-test/configuration');
  const mode = config.modes.find((m) => m.id === modeId);
  if (mode === undefined) throw new ApiFailure(`this deployment offers no "${modeId}" mode (it offers ${config.modes.map((m) => m.id).join(', ')})`);
  checkPlan(config, mode);
  // The largest transfer the deployment takes; one that does not say takes at least its plan's largest.
  const maxBytesPerRequest = config.limits.max_bytes_per_request ?? Math.max(...mode.measurements.map((m) => m.bytes_per_request ?? 0));
  return { config, mode, maxBytesPerRequest };
}

/** Sends the events the configuration names, under one random id per test (the API contract, event_id); none with --no-analytics. */
function eventSender(client: Client, config: Configuration, analytics: boolean): Send {
  const eventId = randomUUID();
  return async (event, properties) => {
    if (!analytics || !config.analytics.events.includes(event)) return;
    const defined = Object.fromEntries(Object.entries(properties).filter(([, v]) => v !== undefined));
    try {
      await client.post(config.analytics.endpoint, { event, event_id: eventId, properties: { source: 'cli', tool_version: TOOL_VERSION, ...defined } });
    } catch (err) {
      // The measurement stands without its event; say so rather than drop it unseen.
      process.stderr.write(`netdiag: the ${event} event was not accepted: ${terminalText(err instanceof Error ? err.message : String(err))}\n`);
    }
  };
}

/** The run with its bar and Ctrl-C: its result, or the exit status of a run that failed (its failure event sent). */
async function runTest(client: Client, plan: Awaited<ReturnType<typeof planOf>>, send: Send, streams: number | undefined): Promise<Result | number> {
  const { mode, maxBytesPerRequest } = plan;
  // The transfers and round trips are made as the client's API calls are (--source, -4 / -6).
  const run = new SpeedTestRun(client.base, client.timeoutMs, { ...(streams === undefined ? {} : { streams }), ...(client.binding === undefined ? {} : { binding: client.binding }) });
  const bar = progressBar();
  const interrupt = () => {
    run.cancel();
  };
  // Said on standard error as it happens (a script's JSON has it too, in the result's notes).
  let shown: RunProgress = { phase: 'latency', done: 0, total: 1 };
  const waited = (w: LimitWait) => {
    bar.say(`netdiag: ${waitingLine('a request of the speed test', w.seconds, w.then)}`);
    bar.update({ ...shown, phase: 'waiting for the rate limit' });
  };
  const onProgress = (p: RunProgress) => {
    shown = p;
    bar.update(p);
  };
  process.once('SIGINT', interrupt);
  const started = performance.now();
  await send('speed_test_started', { mode: mode.id });
  try {
    return await run.run(mode.measurements, onProgress, { mode: mode.id, maxBytesPerRequest }, waited);
  } catch (err) {
    if (!(err instanceof SpeedTestFailure)) throw err;
    bar.stop();
    await send('speed_test_failed', { mode: mode.id, failure_reason: err.reason, duration_ms: Math.round(performance.now() - started) });
    process.stderr.write(`netdiag: the speed test ${err.reason === 'cancelled' ? 'was cancelled' : `failed: ${terminalText(err.message)}`}\n`);
    if (err instanceof RateLimited) return RATE_LIMITED_EXIT;
    return err.reason === 'cancelled' ? CANCELLED_EXIT : 1;
  } finally {
    bar.stop();
    process.removeListener('SIGINT', interrupt);
    run.close();
  }
}

/** The report's lines, label and value, as the table prints them (`--both` prints two side by side). */
export function reportLines(r: SpeedTestReport, result: Result, loss: PacketLoss): [string, string][] {
  return [
    ...(r.server === undefined ? [] : [['server', serverText(r.server)] as [string, string]]),
    ['download', rateText(r.download_mbps, r.download_burst, r.measured.download)],
    ['upload', rateText(r.upload_mbps, r.upload_burst, r.measured.upload)],
    ['latency', formatMs(r.latency_ms ?? undefined)],
    ['jitter', formatMs(r.jitter_ms ?? undefined)],
    ['loaded latency', `${formatMs(r.download_loaded_latency_ms ?? undefined)} down, ${formatMs(r.upload_loaded_latency_ms ?? undefined)} up`],
    ['bufferbloat', r.bufferbloat_grade === null ? `not measured: ${noBufferbloat(result)}` : `${r.bufferbloat_grade} (+${formatMs(r.loaded_latency_increase_ms ?? 0)} under load): ${r.bufferbloat_meaning ?? ''}`],
    ['packet loss', loss.measured ? `${loss.lossPercent.toFixed(1)}% (${String(loss.sent - loss.received)} of ${String(loss.sent)} datagrams, through ${loss.server})` : `${loss.untrusted === true ? 'not trustworthy' : 'not measured'}: ${loss.reason}`],
    ['streaming', r.streaming_quality],
    ['gaming', r.gaming_quality],
    ['video call', r.video_call_quality],
    ['took', `${(r.duration_ms / 1000).toFixed(1)} s, ${String(r.requests)} requests (${r.mode} mode)${r.rate_limit_waits > 0 ? `, ${(r.rate_limit_waited_ms / 1000).toFixed(0)} s of it waiting for the server's rate limit` : ''}`],
  ];
}

/** The server `--server` chose, in words: `fra (https://fra.example.net), the nearest: 6.2 ms round trip`. */
function serverText({ name, url, round_trip_ms }: ServerReport): string {
  const named = name === null ? url : `${name} (${url})`;
  return round_trip_ms === null ? named : `${named}, the nearest: ${round_trip_ms.toFixed(1)} ms round trip`;
}

/** The report as a table, its notes and the share link after it. */
function printTable(out: Output, r: SpeedTestReport, result: Result, loss: PacketLoss, link: string | undefined): void {
  print(pairs(out, reportLines(r, result, loss)));
  for (const note of r.notes) print(`note: ${terminalText(note)}`);
  if (link !== undefined) print(`share: ${terminalText(link)}`);
}

/** A speed test run to its end: the report, what it was built from, and the share link when asked for. */
export interface Measured {
  report: SpeedTestReport;
  result: Result;
  loss: PacketLoss;
  link: string | undefined;
}

/** `netdiag speedtest` against `client`'s deployment, printed as a table or JSON: the exit status. */
export async function speedtestCommand(client: Client, out: Output, options: SpeedTestOptions): Promise<number> {
  const m = await measure(client, options);
  if (typeof m === 'number') return m;
  if (out.json) printJson(m.link === undefined ? m.report : { ...m.report, share_link: m.link });
  else printTable(out, m.report, m.result, m.loss, m.link);
  return 0;
}

/** One speed test against `client`'s deployment, its events sent: what it measured, or the exit status of a run that failed. */
export async function measure(client: Client, options: SpeedTestOptions): Promise<Measured | number> {
  const plan = await planOf(client, options.mode);
  const modeId = plan.mode.id;
  const send = eventSender(client, plan.config, options.analytics);
  const startedAt = Date.now();
  const result = await runTest(client, plan, send, options.streams);
  if (typeof result === 'number') return result;
  const recordTo = process.env.NETDIAG_SPEEDTEST_RECORD;
  if (recordTo !== undefined && recordTo !== '') record(recordTo, result);
  const loss: PacketLoss = options.packetLoss ? await packetLoss(client) : { measured: false, reason: 'skipped (--no-packet-loss)' };
  const r = { ...report(modeId, result, loss), ...(options.server === undefined ? {} : { server: options.server }) };
  await send('speed_test_completed', {
    mode: modeId,
    duration_ms: r.duration_ms,
    download_mbps: r.download_mbps ?? undefined,
    upload_mbps: r.upload_mbps ?? undefined,
    latency_ms: r.latency_ms ?? undefined,
    jitter_ms: r.jitter_ms ?? undefined,
    streaming_quality: r.streaming_quality,
    gaming_quality: r.gaming_quality,
    video_call_quality: r.video_call_quality,
  });
  const link = options.share ? await shareOf(client, { mode: modeId, at: startedAt, streams: options.streams ?? STREAMS }, result, loss, options.shareAddress) : undefined;
  if (link !== undefined) await send('speed_test_shared', { mode: modeId });
  return { report: r, result, loss, link };
}

/**
 * The link `--share` prints: the deployment's page with the result in its fragment (the codec
 * keeps bit/s and µs, src/common/speedtest/share.ts), with the streams it was measured with (when
 * not the default) and the family it was held to (`-4`, `-6`), as the page's own links say them; the address only when
 * asked for, as the deployment sees it. No server name: the link is the measured deployment's own page.
 */
async function shareOf(client: Client, run: { mode: string; at: number; streams: number }, r: Result, loss: PacketLoss, withAddress: boolean): Promise<string> {
  const address = withAddress ? (await client.get<Schemas['CallerIpData']>('/v1/ip')).address : undefined;
  const family = client.binding?.family === undefined ? undefined : client.binding.family === 4 ? ('ipv4' as const) : ('ipv6' as const);
  return shareLink(`${client.base}/`, {
    at: run.at,
    mode: run.mode === 'light' ? 'light' : 'full',
    ...shareFiguresOf(r, loss),
    ...(address === undefined ? {} : { address }),
    // Left out at the default, so a default link keeps the fields a deployment before them reads.
    ...(run.streams === STREAMS ? {} : { streams: run.streams }),
    ...(family === undefined ? {} : { family }),
  });
}
