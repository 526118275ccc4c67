// The speed test's latency and quality classes, computed as the browser speed-test library the configuration
// names computes them (@cloudflare/speedtest 1.14: MeasurementCalculations and
// ScoresCalculations), so `netdiag speedtest` and the page report the same quantities. The rates
// and the loaded latency are working.ts's.
import type { SharedResult } from './share.js';
import { worseLoaded } from './bufferbloat.js';
import { percentile } from '../statistics.js';

/** Median of the pings. */
export const latencyOf = (pings: number[]): number | undefined => percentile(pings, 0.5);

export type Quality = 'bad' | 'poor' | 'average' | 'good' | 'great';
const QUALITIES: Quality[] = ['bad', 'poor', 'average', 'good', 'great'];

/** The speed-test library's scaleThreshold: the range value after the last domain bound the value reaches. */
const scale = (domain: number[], range: number[]) => (value: number): number => {
  let i = 0;
  while (i < domain.length && value >= (domain[i] ?? Infinity)) i++;
  return range[i] ?? 0;
};

// Points per input, the speed-test library's aimMeasurementScoring (milliseconds, bits per second).
const POINTS = {
  packetLoss: scale([0.01, 0.05, 0.25, 0.5], [10, 5, 0, -10, -20]),
  latency: scale([10, 20, 50, 100, 500], [20, 10, 5, 0, -10, -20]),
  loadedLatencyIncrease: scale([10, 20, 50, 100, 500], [20, 10, 5, 0, -10, -20]),
  jitter: scale([10, 20, 100, 500], [10, 5, 0, -10, -20]),
  download: scale([1e6, 1e7, 5e7, 1e8], [0, 5, 10, 20, 30]),
  upload: scale([1e6, 1e7, 5e7, 1e8], [0, 5, 10, 20, 30]),
};
type Input = keyof typeof POINTS;

// The three experiences, their inputs and the point totals that reach each class (aimExperiencesDefs).
const EXPERIENCES: Record<'streaming' | 'gaming' | 'video_call', { input: Input[]; thresholds: number[] }> = {
  streaming: { input: ['latency', 'packetLoss', 'download', 'loadedLatencyIncrease'], thresholds: [15, 20, 40, 60] },
  gaming: { input: ['latency', 'packetLoss', 'loadedLatencyIncrease'], thresholds: [5, 15, 25, 30] },
  video_call: { input: ['latency', 'jitter', 'packetLoss', 'loadedLatencyIncrease'], thresholds: [5, 15, 25, 40] },
};

interface Summary {
  download?: number;
  upload?: number;
  latency?: number;
  jitter?: number;
  downLoadedLatency?: number;
  upLoadedLatency?: number;
  /** Share of datagrams lost through the TURN server (0..1), when it was measured. */
  packetLoss?: number;
}

/** A result's figures in the form a share link keeps (src/common/speedtest/share.ts), without its time, mode and address. */
export type Figures = Omit<SharedResult, 'at' | 'mode' | 'address'>;

/** The quality classes of a result given in its shared form (the command line's result, say). */
export function qualitiesOf(f: Figures): ReturnType<typeof qualities> {
  return qualities({
    download: f.downloadBps,
    upload: f.uploadBps,
    latency: f.latencyMs,
    jitter: f.jitterMs,
    downLoadedLatency: f.loadedDownMs,
    upLoadedLatency: f.loadedUpMs,
    packetLoss: f.lossPercent === undefined ? undefined : f.lossPercent / 100,
  });
}

/**
 * The streaming, gaming and video-call classes, or `pending` where an input is missing. Packet
 * loss not measured (no TURN server, UDP blocked) adds no points, neither the 10 of none lost nor
 * a penalty, as the speed-test library scores it (its defaultPoints); the loaded-latency increase is the larger
 * loaded latency less the idle one.
 */
export function qualities(s: Summary): Record<'streaming' | 'gaming' | 'video_call', Quality | 'pending'> {
  const loaded = worseLoaded(s.downLoadedLatency, s.upLoadedLatency);
  const values: Partial<Record<Input, number>> = {
    packetLoss: s.packetLoss,
    latency: s.latency,
    jitter: s.jitter,
    download: s.download,
    upload: s.upload,
    loadedLatencyIncrease: s.latency !== undefined && s.latency !== 0 && loaded !== undefined ? loaded - s.latency : undefined,
  };
  const classify = ({ input, thresholds }: { input: Input[]; thresholds: number[] }): Quality | 'pending' => {
    let points = 0;
    for (const name of input) {
      const value = values[name];
      if (value !== undefined) points += POINTS[name](value);
      else if (name !== 'packetLoss') return 'pending';
    }
    return QUALITIES[scale(thresholds, [0, 1, 2, 3, 4])(Math.max(0, points))] ?? 'pending';
  };
  return { streaming: classify(EXPERIENCES.streaming), gaming: classify(EXPERIENCES.gaming), video_call: classify(EXPERIENCES.video_call) };
}
