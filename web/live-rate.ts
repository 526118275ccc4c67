// The live rate: bits per second over the last second of bytes counted (web/live-transfers.ts),
// as the page shows it while a direction runs. A moving window rather than a per-transfer figure,
// so it moves smoothly across transfers of any size; it is what is moving now, never the result
// (src/common/speedtest/burst.ts and the engine's rule decide that from whole transfers). No DOM here,
// so it is unit-tested on its own (test/page-live.test.ts).

/** The window the live rate is taken over, ms. */
export const LIVE_WINDOW_MS = 1000;

export class LiveRate {
  /** Bytes counted, with when, oldest first; those older than the window are dropped. */
  private samples: { at: number; bytes: number }[] = [];
  private first: number | undefined;

  add(bytes: number, at: number): void {
    if (bytes <= 0) return;
    this.first ??= at;
    this.samples.push({ at, bytes });
    this.drop(at);
  }

  /**
   * Bits per second over the last LIVE_WINDOW_MS before `now` (or since the first byte, when that
   * is more recent), undefined before any byte or once none came within the window.
   */
  bps(now: number): number | undefined {
    this.drop(now);
    if (this.first === undefined || this.samples.length === 0) return undefined;
    const span = Math.min(LIVE_WINDOW_MS, now - this.first);
    if (span <= 0) return undefined;
    const bytes = this.samples.reduce((sum, s) => sum + s.bytes, 0);
    return (bytes * 8 * 1000) / span;
  }

  private drop(now: number): void {
    while (this.samples.length > 0 && (this.samples[0]?.at ?? now) <= now - LIVE_WINDOW_MS) this.samples.shift();
  }
}
