// The reference for a link's burst and sustained rate: one bulk transfer's bytes counted every
// 100 ms, as issue 38 defines it. The peak is the median of the 100 ms rates in its first second
// (the first interval left out: it holds the connection's start), the sustained rate the median
// of the second half's, and the burst's size the bytes carried above the sustained rate while
// the rate stayed above it by more than a tenth.

export interface BurstReference {
  peakMbps: number;
  sustainedMbps: number;
  /** Bytes carried above the sustained rate; 0 on a link with no burst. */
  burstBytes: number;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = (sorted.length - 1) / 2;
  return ((sorted[Math.floor(mid)] ?? 0) + (sorted[Math.ceil(mid)] ?? 0)) / 2;
};

/** From a bulk transfer's rates per 100 ms, in Mbit/s, in the order they came. */
export function burstReference(mbpsPer100ms: number[]): BurstReference {
  const bins = mbpsPer100ms.slice(1);
  const peakMbps = median(bins.slice(0, 10));
  const sustainedMbps = median(bins.slice(Math.floor(bins.length / 2)));
  let burstBytes = 0;
  for (const rate of bins) {
    if (rate <= sustainedMbps * 1.1) break;
    burstBytes += ((rate - sustainedMbps) * 1e6 * 0.1) / 8;
  }
  return { peakMbps, sustainedMbps, burstBytes };
}
