// The live rate: the rate of the window the running direction would be measured over if it
// ended now, read from what it counted so far (web/working-load.ts) by the rules that give its
// figure (src/common/speedtest/working.ts measureDirection): while the rate settles, the last
// window's length of the counts; once steady, the steady stretch. So the line shows what is being
// measured, and at the direction's end it is the figure. No DOM here, so it is unit-tested on its
// own (test/page-live.test.ts).
import { INTERVAL_MS, measureDirection, type LoadProfile, type Progress } from '../src/common/speedtest/working.js';

/**
 * Bits per second of the window being measured, up to the last count; undefined before any
 * count. Before a whole interval has been counted, the bytes since the start over that time. It
 * ends at the last count, not at the clock: an upload is counted as each transfer ends, and the
 * time since holds bytes still moving.
 */
export function liveBps(progress: readonly Progress[], profile: LoadProfile): number | undefined {
  const last = progress.at(-1);
  if (last === undefined || last.atMs <= 0) return undefined;
  if (last.atMs < INTERVAL_MS) return (last.bytes * 8 * 1000) / last.atMs;
  return measureDirection(progress, [], last.atMs, profile).sustained?.bps;
}
