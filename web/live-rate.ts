// The live rate: bits per second over the last second of what the running direction counted
// (web/working-load.ts), as the page shows it while the direction runs. It is read from the same
// counts, by the same reading between them, as the figure the direction reports
// (src/common/speedtest/working.ts), so once the rate is steady the two agree. No DOM here, so it
// is unit-tested on its own (test/page-live.test.ts).
import { bytesAt, type Progress } from '../src/common/speedtest/working.js';

/** The window the live rate is taken over, ms. */
export const LIVE_WINDOW_MS = 1000;

/**
 * Bits per second over the LIVE_WINDOW_MS before the last count (or since the direction began,
 * when that is more recent); undefined before any count. It ends at the last count, not at the
 * clock: an upload is counted as each transfer ends, and the time since holds bytes still moving.
 */
export function liveBps(progress: readonly Progress[]): number | undefined {
  const last = progress.at(-1);
  if (last === undefined || last.atMs <= 0) return undefined;
  const from = Math.max(0, last.atMs - LIVE_WINDOW_MS);
  return ((last.bytes - bytesAt(progress, from)) * 8 * 1000) / (last.atMs - from);
}
