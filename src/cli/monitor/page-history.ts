// The monitor's runs and the page's history file (src/common/speedtest/history-file.ts), each way,
// so a person moves between the two (docs/monitor.md, "The page's history file"): a speed-test run
// that ran becomes one of the page's results, and a page result becomes a run, its figures named
// as `netdiag speedtest --json` names them.
import { bufferbloat, worseLoaded } from '../../common/speedtest/bufferbloat.js';
import type { SharedResult } from '../../common/speedtest/share.js';
import type { RunRecord } from './store.js';

const number = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** A run as a page result, or undefined when it is no speed test that ran (an RPM, DNS, ... check, or a failed run). */
export function resultOfRun(run: RunRecord): SharedResult | undefined {
  const f = run.figures;
  if (!run.ok || (f.mode !== 'light' && f.mode !== 'full')) return undefined;
  const result: SharedResult = { at: run.startedAt, mode: f.mode };
  const mbps = (v: unknown) => {
    const n = number(v);
    return n === undefined ? undefined : n * 1e6;
  };
  const fields: [keyof SharedResult, number | undefined][] = [
    ['downloadBps', mbps(f.download_mbps)],
    ['uploadBps', mbps(f.upload_mbps)],
    ['latencyMs', number(f.latency_ms)],
    ['jitterMs', number(f.jitter_ms)],
    ['loadedDownMs', number(f.download_loaded_latency_ms)],
    ['loadedUpMs', number(f.upload_loaded_latency_ms)],
    ['lossPercent', number(f.packet_loss_percent)],
  ];
  for (const [key, value] of fields) if (value !== undefined) (result as unknown as Record<string, number>)[key] = value;
  return result;
}

/** A page result as a run of `check` against `server`: it ran, it reported these figures, nothing judged it. */
export function runOfResult(result: SharedResult, check: string, server: string): RunRecord {
  const loaded = worseLoaded(result.loadedDownMs, result.loadedUpMs);
  const bloat = bufferbloat(result.latencyMs, loaded);
  const mbps = (bps: number | undefined) => (bps === undefined ? null : bps / 1e6);
  return {
    check,
    server,
    startedAt: result.at,
    durationMs: 0,
    ok: true,
    error: null,
    figures: {
      mode: result.mode,
      download_mbps: mbps(result.downloadBps),
      upload_mbps: mbps(result.uploadBps),
      latency_ms: result.latencyMs ?? null,
      jitter_ms: result.jitterMs ?? null,
      download_loaded_latency_ms: result.loadedDownMs ?? null,
      upload_loaded_latency_ms: result.loadedUpMs ?? null,
      loaded_latency_increase_ms: bloat?.increaseMs ?? null,
      bufferbloat_grade: bloat?.grade ?? null,
      packet_loss_percent: result.lossPercent ?? null,
    },
    breaches: [],
    source: 'import',
  };
}
