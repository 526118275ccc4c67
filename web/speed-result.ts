// A finished speed test as the page shows it, from the engine's readings: each figure's value,
// the line under it and its exact number, the verdict line, and the record a share link, the
// history and the export keep. Pure (no DOM, no engine), so the rules are unit-tested on their own
// (test/page-speed-result.test.ts); web/speedtest.ts draws it and sends what it must.
import { bufferbloat } from '../src/common/speedtest/bufferbloat.js';
import { directionRates, type Burst } from '../src/common/speedtest/burst.js';
import { LOADED_REQUEST_MIN_MS, MIN_BANDWIDTH_REQUEST_MS, qualities, type Bandwidth, type Quality } from '../src/common/speedtest/metrics.js';
import { sharedBps, sharedMs, type SharedResult } from '../src/common/speedtest/share.js';
import { t } from './i18n/locale.js';
import { bloatText, burstText, classesWaitFor, formatMbps, formatMs, loadedText, lossText, lossUntrusted, noLoadedLatency, spread, timedTransfers, verdictLine, worseLoaded, type Classes, type EnginePoint, type LossSending, type Spread } from './report.js';


/** What the engine read, as the page hands it over when the test ends. */
export interface Readings {
  mode: string;
  /** When the test started, ms since the epoch. */
  startedAt: number;
  download: readonly EnginePoint[];
  upload: readonly EnginePoint[];
  idle: readonly number[];
  loadedDown: readonly number[];
  loadedUp: readonly number[];
  /**
   * The packet-loss step: not run and why, failed and why, or what it counted and how the
   * browser sent it (web/loss-watch.ts; undefined when the browser could not say).
   */
  loss: { run: false; why: string } | { run: true; error: string } | { run: true; sent: number; lost: number; sending: LossSending | undefined };
}

/** One figure as shown: its value, the line under it, its exact number for scripts and tests. */
export interface Figure {
  value: string;
  detail?: string;
  exact?: number;
  burst?: Burst;
}

export type FigureName = 'download' | 'upload' | 'latency' | 'loaded' | 'bufferbloat' | 'loss' | 'classes';

export interface SpeedResult {
  figures: Record<FigureName, Figure>;
  /** The line in plain words above the figures, when there is one to say (web/report.ts). */
  verdict: string | undefined;
  /** The figures as a share link, the history and the analytics event keep them. */
  shared: SharedResult;
  /** The loss counted, when it is the network's. */
  loss: { sent: number; lost: number; percent: number } | undefined;
  /** Whether the packet-loss step ran to its count (not skipped, not failed). */
  lossCounted: boolean;
  /** What the loss rule read of the browser's sending, for scripts and tests, when it could. */
  lossSending: LossSending | undefined;
  classes: Record<'streaming' | 'gaming' | 'video_call', Quality | 'pending'>;
  bufferbloat: { grade: string; increase_ms: number } | null;
}

/** min, p90 and jitter of a set of round trips, in words. */
const spreadText = (s: Spread): string =>
  s.jitter === null
    ? t('figure.spread', { min: formatMs(s.min), p90: formatMs(s.p90), count: String(s.count) })
    : t('figure.spread-jitter', { min: formatMs(s.min), p90: formatMs(s.p90), jitter: formatMs(s.jitter), count: String(s.count) });

/**
 * How a rate was reached: the engine's rule, the 90th percentile of transfers of 10 ms or more
 * (shorter ones say more about timers and a shaper's burst than the link: with a 256 kB tbf bucket
 * on a 20 Mbit/s link, counting transfers of 1 ms read 136-302 Mbit/s); or, next to the server,
 * where every transfer is shorter, all of them, said as such.
 */
const basis = (b: Bandwidth): string => {
  const least = formatMs(MIN_BANDWIDTH_REQUEST_MS);
  if (b.shortRequestsOnly) return t('figure.basis-short', { count: String(b.counted), least });
  return b.counted === 1 ? t('figure.basis-one', { least }) : t('figure.basis-p90', { count: String(b.counted), least });
};


/** A quality class's word, or pending. */
const quality = (q: Quality | undefined): string => (q === undefined ? t('common.pending') : t(`quality.${q}`));

/** A rate, with the burst before it in the line under it when the link gave one. */
function rateFigure(b: Bandwidth | undefined, burst: Burst | undefined): Figure {
  const how = b === undefined ? t('figure.no-transfer') : basis(b);
  return { value: formatMbps(b?.bps), detail: burst === undefined ? how : t('figure.burst-then', { burst: burstText(burst), how }), exact: b?.bps, burst };
}

/** The finished test's figures from what the engine read. */
export function speedResult(r: Readings): SpeedResult {
  // Figures at the precision a share link keeps (src/common/speedtest/share.ts), so a shared copy
  // reads exactly as this page does.
  const atLink = (b: Bandwidth | undefined): Bandwidth | undefined => (b === undefined ? undefined : { ...b, bps: sharedBps(b.bps) });
  const atLinkMs = (x: Spread | undefined): Spread | undefined => (x === undefined ? undefined : { ...x, median: sharedMs(x.median), jitter: x.jitter === null ? null : sharedMs(x.jitter) });
  // The rate each direction sustains, and the burst before it if the link gave one
  // (src/common/speedtest/burst.ts, the command line's rules).
  const downRates = directionRates(timedTransfers(r.download, 'download'));
  const upRates = directionRates(timedTransfers(r.upload, 'upload'));
  const down = atLink(downRates.sustained);
  const up = atLink(upRates.sustained);
  const idle = atLinkMs(spread([...r.idle]));
  // The engine answers 0 for a loaded latency it has no round trip for: its points say whether it has any.
  const loadedDown = atLinkMs(spread([...r.loadedDown]));
  const loadedUp = atLinkMs(spread([...r.loadedUp]));
  const loaded = worseLoaded(loadedDown?.median, loadedUp?.median);
  const bloat = bufferbloat(idle?.median, loaded);

  const least = formatMs(LOADED_REQUEST_MIN_MS);
  const p90 = (x: Spread | undefined, dir: 'down' | 'up') =>
    x === undefined ? t(dir === 'down' ? 'figure.loaded-none-down' : 'figure.loaded-none-up', { least }) : t(dir === 'down' ? 'figure.loaded-p90-down' : 'figure.loaded-p90-up', { p90: formatMs(x.p90), count: String(x.count) });
  let loss: SpeedResult['loss'];
  let lossSending: LossSending | undefined;
  let lossFigure: Figure;
  const NOT_MEASURED = t('common.not-measured');
  if (!r.loss.run) lossFigure = { value: NOT_MEASURED, detail: r.loss.why };
  else if ('error' in r.loss) lossFigure = { value: NOT_MEASURED, detail: r.loss.error };
  else {
    const { sent, lost, sending } = r.loss;
    lossSending = sending;
    const untrusted = sending === undefined ? undefined : lossUntrusted(sending, lost);
    if (sent === 0) lossFigure = { value: NOT_MEASURED, detail: t('figure.loss-none-sent') };
    // No number: the count would be the browser's bundling more than the network's loss.
    // Measured, but what was counted is not the network's loss, and the detail says why.
    else if (untrusted !== undefined) lossFigure = { value: t('common.not-trustworthy'), detail: untrusted };
    else {
      // To the hundredth of a percent, as a share link keeps it.
      loss = { sent, lost, percent: Math.round((10_000 * lost) / sent) / 100 };
      lossFigure = { value: lossText(loss.percent), detail: t('figure.loss-count', { lost: String(lost), sent: String(sent) }), exact: (100 * lost) / sent };
    }
  }

  const q = qualities({ download: down?.bps, upload: up?.bps, latency: idle?.median, jitter: idle?.jitter ?? undefined, downLoadedLatency: loadedDown?.median, upLoadedLatency: loadedUp?.median, packetLoss: loss === undefined ? undefined : loss.lost / loss.sent });
  const known = (c: Quality | 'pending') => (c === 'pending' ? undefined : c);
  const classes: Classes = { streaming: known(q.streaming), gaming: known(q.gaming), videoCall: known(q.video_call) };
  const waiting = classesWaitFor(classes, idle !== undefined, loaded !== undefined, r.mode);

  return {
    figures: {
      download: rateFigure(down, downRates.burst),
      upload: rateFigure(up, upRates.burst),
      latency: idle === undefined ? { value: NOT_MEASURED, detail: t('figure.no-round-trip') } : { value: formatMs(idle.median), detail: spreadText(idle), exact: idle.median },
      loaded: loaded === undefined ? { value: NOT_MEASURED, detail: noLoadedLatency(r.mode) } : { value: loadedText(loadedDown?.median, loadedUp?.median), detail: t('figure.loaded-parts', { down: p90(loadedDown, 'down'), up: p90(loadedUp, 'up') }), exact: loaded },
      bufferbloat: bloat === undefined ? { value: NOT_MEASURED, detail: t('figure.no-bloat') } : { value: bloatText(bloat), detail: t(`bloat.${bloat.grade}`), exact: bloat.increaseMs },
      loss: lossFigure,
      classes: { value: waiting === undefined ? t('figure.classes', { streaming: quality(classes.streaming), gaming: quality(classes.gaming), videoCall: quality(classes.videoCall) }) : t('common.pending'), detail: waiting },
    },
    // The answer first: what the connection is good for, in one line above the figures.
    verdict: verdictLine(classes, bloat),
    shared: {
      at: r.startedAt,
      mode: r.mode === 'light' ? 'light' : 'full',
      downloadBps: down?.bps,
      uploadBps: up?.bps,
      latencyMs: idle?.median,
      jitterMs: idle?.jitter ?? undefined,
      loadedDownMs: loadedDown?.median,
      loadedUpMs: loadedUp?.median,
      lossPercent: loss?.percent,
    },
    loss,
    lossCounted: r.loss.run && !('error' in r.loss),
    lossSending,
    classes: q,
    bufferbloat: bloat === undefined ? null : { grade: bloat.grade, increase_ms: bloat.increaseMs },
  };
}
