// src/common/: rules the clients (the page, the command line's client code) share with the server;
// besides the contract's generated types, the one part of src/ a client may import; it imports nothing else.
// Figures of a set of round trips that the speed test, the watch (page and command line) and
// their reports share: one definition each, so a median or a jitter means the same everywhere.

/** Linear interpolation between closest ranks, the speed-test library's percentile (@cloudflare/speedtest). */
export function percentile(values: number[], p: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const idx = (sorted.length - 1) * p;
  const lo = sorted[Math.floor(idx)] ?? 0;
  const hi = sorted[Math.ceil(idx)] ?? lo;
  return lo + (hi - lo) * (idx % 1);
}

/** Mean absolute difference of consecutive pings; needs two. */
export function jitterOf(pings: number[]): number | undefined {
  if (pings.length < 2) return undefined;
  let sum = 0;
  for (let i = 1; i < pings.length; i++) sum += Math.abs((pings[i] ?? 0) - (pings[i - 1] ?? 0));
  return sum / (pings.length - 1);
}
