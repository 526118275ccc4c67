// `netdiag speedtest`: the configuration's plan for a mode run from Node (speedtest-run.ts), a
// progress bar on a terminal, the result as a table or JSON, and the analytics events the
// configuration advertises with `source: "cli"` (the API contract), unless --no-analytics.
import { randomUUID } from 'node:crypto';
import cliProgress from 'cli-progress';
import { ApiFailure, type Client } from './client.js';
import { pairs, print, printJson, type Output } from './output.js';
import { terminalText } from './terminal-text.js';
import { qualitiesOf, type Figures } from '../common/speedtest/metrics.js';
import { bufferbloat } from '../common/speedtest/bufferbloat.js';
import type { Schemas } from '../generated/openapi-types.js';
import { SpeedTestFailure, SpeedTestRun, type Progress, type Result } from './speedtest-run.js';
import type { Burst } from '../common/speedtest/burst.js';
import { packetLoss, type PacketLoss } from './speedtest-loss.js';
import { TOOL_VERSION } from './version.js';
import { shareLink } from '../common/speedtest/share.js';

interface SpeedTestOptions {
  mode: string;
  analytics: boolean;
  /** Measure packet loss through the deployment's TURN server after the transfers. */
  packetLoss: boolean;
  /** Print a link to the deployment's page carrying the result (`--share`), with the caller's address when `shareAddress`. */
  share: boolean;
  shareAddress: boolean;
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
const burstJson = (b: Burst | undefined) => (b === undefined ? null : { peak_mbps: mbps(b.peakBps) ?? 0, bytes: b.bytes, duration_ms: Math.round(b.durationMs) });

/** A rate with the burst before it, in words: `19.1 Mbps (burst: 38.1 Mbps for the first 3.8 MB)`. */
function rateText(value: number | null, burst: ReturnType<typeof burstJson>): string {
  const rate = formatMbps(value ?? undefined);
  return burst === null ? rate : `${rate} sustained (burst: ${formatMbps(burst.peak_mbps)} for the first ${(burst.bytes / 1e6).toFixed(1)} MB)`;
}

/** A result's figures, as a share link carries them and the quality classes read them. */
function figuresOf(r: Result, loss: PacketLoss): Figures {
  return {
    downloadBps: r.download?.bps,
    uploadBps: r.upload?.bps,
    latencyMs: r.latency,
    jitterMs: r.jitter,
    loadedDownMs: r.downLoadedLatency,
    loadedUpMs: r.upLoadedLatency,
    lossPercent: loss.measured ? loss.lossPercent : undefined,
  };
}

/** The result as scripts get it (--json): every field present, null where nothing was measured. */
function report(mode: string, r: Result, loss: PacketLoss) {
  const classes = qualitiesOf(figuresOf(r, loss));
  const notes: string[] = [];
  for (const [name, bw] of [['download', r.download], ['upload', r.upload]] as const) {
    if (bw?.shortRequestsOnly === true) notes.push(`every ${name} request took under 10 ms, so the ${name} rate counts them all (the engine counts only requests of 10 ms or more); a full test gives a firmer figure`);
  }
  if (r.downLoadedLatency === undefined && r.upLoadedLatency === undefined) notes.push('no transfer lasted 250 ms, so there is no loaded latency and the quality classes stay pending');
  if (!loss.measured) notes.push(`packet loss ${loss.untrusted === true ? 'not trustworthy' : 'not measured'}: ${loss.reason}`);
  // The worse direction under load, against the idle latency.
  const loaded = r.downLoadedLatency === undefined && r.upLoadedLatency === undefined ? undefined : Math.max(r.downLoadedLatency ?? 0, r.upLoadedLatency ?? 0);
  const bloat = bufferbloat(r.latency, loaded);
  return {
    mode,
    download_mbps: mbps(r.download?.bps) ?? null,
    upload_mbps: mbps(r.upload?.bps) ?? null,
    download_burst: burstJson(r.downloadBurst),
    upload_burst: burstJson(r.uploadBurst),
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
    download_requests_counted: r.download?.counted ?? 0,
    upload_requests_counted: r.upload?.counted ?? 0,
    notes,
  };
}

/** A bar on standard error when it is a terminal; nothing otherwise (pipes, files, CI logs). */
function progressBar(): { update(p: Progress): void; stop(): void } {
  if (!process.stderr.isTTY) return { update: () => undefined, stop: () => undefined };
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
    stop: () => {
      if (started) bar.stop();
    },
  };
}

export async function speedtestCommand(client: Client, out: Output, options: SpeedTestOptions): Promise<number> {
  const config = await client.get<Schemas['SpeedTestConfiguration']>('/v1/speed-test/configuration');
  const mode = config.modes.find((m) => m.id === options.mode);
  if (mode === undefined) throw new ApiFailure(`this deployment offers no "${options.mode}" mode (it offers ${config.modes.map((m) => m.id).join(', ')})`);

  // One random id per test (the API contract, event_id); only the events the configuration names.
  const eventId = randomUUID();
  const send = async (event: Schemas['EventName'], properties: Record<string, string | number | undefined>) => {
    if (!options.analytics || !config.analytics.events.includes(event)) return;
    const defined = Object.fromEntries(Object.entries(properties).filter(([, v]) => v !== undefined));
    try {
      await client.post(config.analytics.endpoint, { event, event_id: eventId, properties: { source: 'cli', tool_version: TOOL_VERSION, ...defined } });
    } catch (err) {
      // The measurement stands without its event; say so rather than drop it unseen.
      process.stderr.write(`netdiag: the ${event} event was not accepted: ${terminalText(err instanceof Error ? err.message : String(err))}\n`);
    }
  };

  const run = new SpeedTestRun(client.base, client.timeoutMs);
  const bar = progressBar();
  const interrupt = () => {
    run.cancel();
  };
  process.once('SIGINT', interrupt);
  const started = performance.now();
  const startedAt = Date.now();
  await send('speed_test_started', { mode: mode.id });
  let result: Result;
  try {
    result = await run.run(mode.measurements, (p) => {
      bar.update(p);
    });
  } catch (err) {
    bar.stop();
    if (!(err instanceof SpeedTestFailure)) throw err;
    await send('speed_test_failed', { mode: mode.id, failure_reason: err.reason, duration_ms: Math.round(performance.now() - started) });
    process.stderr.write(`netdiag: the speed test ${err.reason === 'cancelled' ? 'was cancelled' : `failed: ${terminalText(err.message)}`}\n`);
    return err.reason === 'cancelled' ? CANCELLED_EXIT : 1;
  } finally {
    process.removeListener('SIGINT', interrupt);
    run.close();
  }
  bar.stop();
  const loss: PacketLoss = options.packetLoss ? await packetLoss(client) : { measured: false, reason: 'skipped (--no-packet-loss)' };
  const r = report(mode.id, result, loss);
  await send('speed_test_completed', {
    mode: mode.id,
    duration_ms: r.duration_ms,
    download_mbps: r.download_mbps ?? undefined,
    upload_mbps: r.upload_mbps ?? undefined,
    latency_ms: r.latency_ms ?? undefined,
    jitter_ms: r.jitter_ms ?? undefined,
    streaming_quality: r.streaming_quality,
    gaming_quality: r.gaming_quality,
    video_call_quality: r.video_call_quality,
  });
  const link = options.share ? await shareOf(client, mode.id, startedAt, result, loss, options.shareAddress) : undefined;
  if (link !== undefined) await send('speed_test_shared', { mode: mode.id });
  if (out.json) {
    printJson(link === undefined ? r : { ...r, share_link: link });
    return 0;
  }
  print(
    pairs(out, [
      ['download', rateText(r.download_mbps, r.download_burst)],
      ['upload', rateText(r.upload_mbps, r.upload_burst)],
      ['latency', formatMs(r.latency_ms ?? undefined)],
      ['jitter', formatMs(r.jitter_ms ?? undefined)],
      ['loaded latency', `${formatMs(r.download_loaded_latency_ms ?? undefined)} down, ${formatMs(r.upload_loaded_latency_ms ?? undefined)} up`],
      ['bufferbloat', r.bufferbloat_grade === null ? 'not measured: no transfer lasted 250 ms' : `${r.bufferbloat_grade} (+${formatMs(r.loaded_latency_increase_ms ?? 0)} under load): ${r.bufferbloat_meaning ?? ''}`],
      ['packet loss', loss.measured ? `${loss.lossPercent.toFixed(1)}% (${String(loss.sent - loss.received)} of ${String(loss.sent)} datagrams, through ${loss.server})` : `${loss.untrusted === true ? 'not trustworthy' : 'not measured'}: ${loss.reason}`],
      ['streaming', r.streaming_quality],
      ['gaming', r.gaming_quality],
      ['video call', r.video_call_quality],
      ['took', `${(r.duration_ms / 1000).toFixed(1)} s, ${String(r.requests)} requests (${mode.id} mode)`],
    ]),
  );
  for (const note of r.notes) print(`note: ${terminalText(note)}`);
  if (link !== undefined) print(`share: ${terminalText(link)}`);
  return 0;
}

/**
 * The link `--share` prints: the deployment's page with the result in its fragment (the codec
 * keeps bit/s and µs, src/common/speedtest/share.ts); the address only when asked for, as the
 * deployment sees it.
 */
async function shareOf(client: Client, mode: string, at: number, r: Result, loss: PacketLoss, withAddress: boolean): Promise<string> {
  const address = withAddress ? (await client.get<Schemas['CallerIpData']>('/v1/ip')).address : undefined;
  return shareLink(`${client.base}/`, { at, mode: mode === 'light' ? 'light' : 'full', ...figuresOf(r, loss), ...(address === undefined ? {} : { address }) });
}
