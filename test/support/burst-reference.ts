// The reference for a link's burst and sustained rate: one bulk transfer's bytes counted every
// 100 ms, as issue 38 defines it. The peak is the median of the 100 ms rates in its first second
// (the first interval left out: it holds the connection's start), the sustained rate the median
// of the second half's, and the burst's size the bytes carried above the sustained rate while
// the rate stayed above it by more than a tenth.
import http from 'node:http';

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

/**
 * How much the reference downloads from a link of `rateMbit` that gives `bucketBytes` at `peakMbit`
 * first: enough to spend the bucket at the peak, then four seconds at the rate.
 */
export function referenceBytes(rateMbit: number, peakMbit: number, bucketBytes: number): number {
  return Math.round((bucketBytes * peakMbit) / (peakMbit - rateMbit) + ((rateMbit * 1e6) / 8) * 4);
}

/** One bulk download of `bytes` from a deployment's `/__down`, its rate counted every 100 ms: the reference. */
export function measureBurstReference(base: string, bytes: number): Promise<BurstReference> {
  return new Promise((resolve, reject) => {
    const rates: number[] = [];
    let mark = performance.now();
    let inBin = 0;
    http
      .get(`${base}/__down?bytes=${String(bytes)}`, (res) => {
        res.on('data', (chunk: Buffer) => {
          inBin += chunk.length;
          const now = performance.now();
          if (now - mark >= 100) {
            rates.push((8 * inBin) / ((now - mark) * 1000));
            inBin = 0;
            mark = now;
          }
        });
        res.on('end', () => {
          resolve(burstReference(rates));
        });
        res.on('error', reject);
      })
      .on('error', reject);
  });
}
