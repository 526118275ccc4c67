// A monitor's speed-test run as one of the page's results (share.ts's SharedResult), its figures
// read as `netdiag speedtest --json` names them: `netdiag monitor export` writes the page's history
// file with it, and the monitor's local page draws the page's own trend chart with it.
import { decodeResult, encodeResult, type SharedResult } from './share.js';

/** What a run carries that a result is made of: its start, whether it ran, its figures. */
interface RunLike {
  startedAt: number;
  ok: boolean;
  figures: Readonly<Record<string, unknown>>;
}

const number = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** A run as a page result, or undefined when it is no speed test that ran (an RPM, DNS, ... check, or a failed run) or holds a figure past the share codec's bounds. */
export function resultOfRun(run: RunLike): SharedResult | undefined {
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
  // Through the share codec and back, as the page keeps every result: its bounds and precision
  // (the time to the second); a figure past the bounds leaves the run out.
  const checked = decodeResult(encodeResult(result));
  return checked.ok ? checked.result : undefined;
}

