// A page result as a monitor run (docs/monitor.md, "The page's history file"), its figures named
// as `netdiag speedtest --json` names them; the other way is src/common/speedtest/run-result.ts,
// which the monitor's page uses too.
import { bufferbloat, worseLoaded } from '../../common/speedtest/bufferbloat.js';
import type { SharedResult } from '../../common/speedtest/share.js';
import type { RunRecord } from './store.js';

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
