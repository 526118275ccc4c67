// A finished speed test as the page shows it, from what it read: the speed-test library's idle round trips
// and packet loss, and each direction's load as the rules measured it
// (src/common/speedtest/working.ts): each figure's value, the line under it and its exact number,
// the verdict line, and the record a share link, the history and the export keep. Pure (no DOM,
// no speed-test library), so the rules are unit-tested on their own (test/page/speed-result.test.ts);
// web/speedtest/speedtest.ts draws it and sends what it must.
import { loadedRpmEstimate } from '../../src/common/responsiveness/rpm.js';
import { bufferbloat, worseLoaded } from '../../src/common/speedtest/bufferbloat.js';
import { qualities, type Quality } from '../../src/common/speedtest/latency-quality.js';
import type { PageBufferbloat, QualityClasses } from '../../src/common/speedtest/report.js';
import { sharedBps, sharedMs, type SharedResult } from '../../src/common/speedtest/share.js';
import type { LoadRun } from '../../src/common/speedtest/load-loop.js';
import type { Burst, RoundTrip } from '../../src/common/speedtest/working.js';
import { num, t } from '../i18n/locale.js';
import { bloatText, burstText, classesWaitFor, formatMbps, formatMs, loadedText, lossText, lossUntrusted, noLoadedLatency, rpmText, spread, verdictLine, verdictWithRpm, type Classes, type LossSending, type Spread } from './result-text.js';

/** A protocol that carries every request to an origin on one connection: HTTP/2 or HTTP/3 (their ALPN ids). */
export type Multiplexing = 'h2' | 'h3';

/**
 * A direction as the load ran it (src/common/speedtest/load-loop.ts): what the rules read, the
 * round trips taken beside it, and `multiplexed` when its requests went over HTTP/2 or HTTP/3,
 * where the browser puts every stream on one connection to the origin.
 */
export type Measured = Pick<LoadRun, 'measure' | 'roundTrips' | 'streams'> & { multiplexed?: Multiplexing };

const PROTOCOL_NAME: Readonly<Record<Multiplexing, string>> = { h2: 'HTTP/2', h3: 'HTTP/3' };

/** What the test read, as the page hands it over when the test ends. */
export interface Readings {
  mode: string;
  /** When the test started, ms since the epoch. */
  startedAt: number;
  /** Each direction's load, undefined when the mode does not run it. */
  download: Measured | undefined;
  upload: Measured | undefined;
  /** The speed-test library's idle round trips, ms. */
  idle: readonly number[];
  /**
   * The packet-loss step: not run and why, failed and why, or what it counted and how the
   * browser sent it (web/speedtest/loss-watch.ts; undefined when the browser could not say).
   */
  loss: { run: false; why: string } | { run: true; error: string } | { run: true; sent: number; lost: number; sending: LossSending | undefined };
}

/** One figure as shown: its value, the line under it, its exact number for scripts and tests. */
export interface PageFigure {
  value: string;
  detail?: string;
  exact?: number;
  burst?: Burst;
}

export type FigureName = 'download' | 'upload' | 'latency' | 'loaded' | 'bufferbloat' | 'rpm' | 'loss' | 'classes';

export interface SpeedResult {
  figures: Record<FigureName, PageFigure>;
  /** The line in plain words above the figures, when there is one to say (web/speedtest/result-text.ts). */
  verdict: string | undefined;
  /** The figures as a share link, the history and the analytics event keep them. */
  shared: SharedResult;
  /** The loss counted, when it is the network's. */
  loss: { sent: number; lost: number; percent: number } | undefined;
  /** Whether the packet-loss step ran to its count (not skipped, not failed). */
  lossCounted: boolean;
  /** What the loss rule read of the browser's sending, for scripts and tests, when it could. */
  lossSending: LossSending | undefined;
  classes: QualityClasses;
  bufferbloat: PageBufferbloat | null;
  /** The responsiveness estimate, whole RPM (src/common/responsiveness/rpm.ts loadedRpmEstimate), null without round trips under load. */
  rpm: number | null;
}

/** min, p90 and jitter of a set of round trips, in words. */
const spreadText = (s: Spread): string =>
  s.jitter === null
    ? t('figure.spread', { min: formatMs(s.min), p90: formatMs(s.p90), count: num(s.count) })
    : t('figure.spread-jitter', { min: formatMs(s.min), p90: formatMs(s.p90), jitter: formatMs(s.jitter), count: num(s.count) });

const seconds = (ms: number): string => t('unit.s', { value: num(ms / 1000, 1) });

/**
 * How a rate was reached: over a steady stretch of the load, or, when the rate never settled,
 * over its last part; and, when several streams went over HTTP/2 or HTTP/3, that they shared one
 * connection, so single against multi compares streams, not connections.
 */
const basis = (m: Measured): string => {
  const s = m.measure.sustained;
  if (s === undefined) return t('figure.no-transfer');
  const time = seconds(s.endMs - s.startMs);
  const streams = num(m.streams);
  // One stream is said in the singular ("1 stream"): the single-stream choice names its count.
  if (m.streams === 1) return s.steady ? t('figure.rate-steady-one', { streams, time }) : t('figure.rate-unsteady-one', { streams, time });
  const how = s.steady ? t('figure.rate-steady', { streams, time }) : t('figure.rate-unsteady', { streams, time });
  return m.multiplexed === undefined ? how : t('figure.rate-one-connection', { how, protocol: PROTOCOL_NAME[m.multiplexed] });
};

/** A quality class's word, or pending. */
const quality = (q: Quality | undefined): string => (q === undefined ? t('common.pending') : t(`quality.${q}`));

/**
 * A rate at a share link's precision (src/common/speedtest/share.ts), so a shared copy reads
 * exactly as this page does, with the burst before it in the line under it when the link gave one.
 */
function rateFigure(m: Measured | undefined): PageFigure {
  const bps = m?.measure.sustained === undefined ? undefined : sharedBps(m.measure.sustained.bps);
  const how = m === undefined ? t('figure.no-transfer') : basis(m);
  const burst = m?.measure.burst;
  return { value: formatMbps(bps), detail: burst === undefined ? how : t('figure.burst-then', { burst: burstText(burst), how }), exact: bps, burst };
}

/**
 * The round trips of a direction's window, as the rules pick them (sent within it), with the
 * median the rules read; undefined when none was.
 */
function loadedOf(m: Measured | undefined): Spread | undefined {
  const sustained = m?.measure.sustained;
  const loaded = m?.measure.loaded;
  if (m === undefined || sustained === undefined || loaded === undefined) return undefined;
  const inWindow = spread(windowRoundTrips(m.roundTrips, sustained).map((r) => r.ms));
  return inWindow === undefined ? undefined : { ...inWindow, median: sharedMs(loaded.ms) };
}

/** The round trips sent within a direction's window, as measureDirection counts them. */
export const windowRoundTrips = (roundTrips: readonly RoundTrip[], window: { startMs: number; endMs: number }): RoundTrip[] => roundTrips.filter((r) => r.atMs >= window.startMs && r.atMs <= window.endMs);

/** The finished test's figures from what the speed-test library read. */
export function speedResult(r: Readings): SpeedResult {
  // Figures at the precision a share link keeps (src/common/speedtest/share.ts), so a shared copy
  // reads exactly as this page does.
  const atLinkMs = (x: Spread | undefined): Spread | undefined => (x === undefined ? undefined : { ...x, median: sharedMs(x.median), jitter: x.jitter === null ? null : sharedMs(x.jitter) });
  // The rate each direction sustains, and the burst before it if the link gave one
  // (src/common/speedtest/working.ts, the command line's rules).
  const downFigure = rateFigure(r.download);
  const upFigure = rateFigure(r.upload);
  const down = downFigure.exact;
  const up = upFigure.exact;
  const idle = atLinkMs(spread([...r.idle]));
  const loadedDown = loadedOf(r.download);
  const loadedUp = loadedOf(r.upload);
  const loaded = worseLoaded(loadedDown?.median, loadedUp?.median);
  const bloat = bufferbloat(idle?.median, loaded);
  // The same windows' round trips as the loaded latency, every one of them (the estimate's
  // trimmed mean leaves out the slowest 5%), at a share link's precision.
  const windowTrips = [r.download, r.upload].flatMap((m) => (m?.measure.sustained === undefined ? [] : windowRoundTrips(m.roundTrips, m.measure.sustained).map((x) => x.ms)));
  const estimate = loadedRpmEstimate(windowTrips);
  const rpm = estimate === undefined ? undefined : Math.round(estimate);

  const p90 = (x: Spread | undefined, dir: 'down' | 'up') =>
    x === undefined ? t(dir === 'down' ? 'figure.loaded-none-down' : 'figure.loaded-none-up') : t(dir === 'down' ? 'figure.loaded-p90-down' : 'figure.loaded-p90-up', { p90: formatMs(x.p90), count: num(x.count) });
  let loss: SpeedResult['loss'];
  let lossSending: LossSending | undefined;
  let lossFigure: PageFigure;
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

  const q = qualities({ download: down, upload: up, latency: idle?.median, jitter: idle?.jitter ?? undefined, downLoadedLatency: loadedDown?.median, upLoadedLatency: loadedUp?.median, packetLoss: loss === undefined ? undefined : loss.lost / loss.sent });
  const known = (c: QualityClasses[keyof QualityClasses]) => (c === 'pending' ? undefined : c);
  const classes: Classes = { streaming: known(q.streaming), gaming: known(q.gaming), videoCall: known(q.video_call) };
  const waiting = classesWaitFor(classes, idle !== undefined, loaded !== undefined, r.mode);

  return {
    figures: {
      download: downFigure,
      upload: upFigure,
      latency: idle === undefined ? { value: NOT_MEASURED, detail: t('figure.no-round-trip') } : { value: formatMs(idle.median), detail: spreadText(idle), exact: idle.median },
      loaded: loaded === undefined ? { value: NOT_MEASURED, detail: noLoadedLatency() } : { value: loadedText(loadedDown?.median, loadedUp?.median), detail: t('figure.loaded-parts', { down: p90(loadedDown, 'down'), up: p90(loadedUp, 'up') }), exact: loaded },
      bufferbloat: bloat === undefined ? { value: NOT_MEASURED, detail: t('figure.no-bloat') } : { value: bloatText(bloat), detail: t(`bloat.${bloat.grade}`), exact: bloat.increaseMs },
      rpm: rpm === undefined ? { value: NOT_MEASURED, detail: t('figure.no-rpm') } : { value: rpmText(rpm), detail: t('figure.rpm-estimate', { count: num(windowTrips.length), minute: num(60_000) }), exact: rpm },
      loss: lossFigure,
      classes: { value: waiting === undefined ? t('figure.classes', { streaming: quality(classes.streaming), gaming: quality(classes.gaming), videoCall: quality(classes.videoCall) }) : t('common.pending'), detail: waiting },
    },
    // The answer first: what the connection is good for, in one line above the figures.
    verdict: verdictWithRpm(verdictLine(classes, bloat), rpm),
    shared: {
      at: r.startedAt,
      mode: r.mode === 'light' ? 'light' : 'full',
      downloadBps: down,
      uploadBps: up,
      latencyMs: idle?.median,
      jitterMs: idle?.jitter ?? undefined,
      loadedDownMs: loadedDown?.median,
      loadedUpMs: loadedUp?.median,
      lossPercent: loss?.percent,
      rpm,
    },
    loss,
    lossCounted: r.loss.run && !('error' in r.loss),
    lossSending,
    classes: q,
    bufferbloat: bloat === undefined ? null : { grade: bloat.grade, increase_ms: bloat.increaseMs },
    rpm: rpm ?? null,
  };
}
