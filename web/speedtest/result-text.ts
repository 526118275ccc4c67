// What the page says about a finished test, as plain values: the spread of a set of round trips,
// why something was not measured, what the quality classes still wait for, and whether the
// browser itself is likely to be the limit. No DOM here, so each rule is unit-tested on its own
// (test/page/result-text.test.ts).
import { rpmClass } from '../../src/common/responsiveness/rpm.js';
import { jitterOf, percentile } from '../../src/common/statistics.js';
import type { Quality } from '../../src/common/speedtest/latency-quality.js';
import type { Burst } from '../../src/common/speedtest/working.js';
import { FAMILY_NAME, type Family } from '../../src/common/families.js';
import { listed, num, t } from '../i18n/locale.js';

export function formatMs(ms: number): string {
  return t('unit.ms', { value: num(ms, ms < 10 ? 1 : 0) });
}

export function formatMbps(bps: number | undefined): string {
  if (bps === undefined) return '–';
  const mbps = bps / 1e6;
  return t('unit.mbps', { value: num(mbps, mbps < 10 ? 2 : 0) });
}

/** Latency under load per direction, as the result and a shared copy of it both show it. */
export function loadedText(downMs: number | undefined, upMs: number | undefined): string {
  if (downMs === undefined) return t('figure.loaded-down-missing', { up: upMs === undefined ? '' : formatMs(upMs) });
  if (upMs === undefined) return t('figure.loaded-up-missing', { down: formatMs(downMs) });
  return t('figure.loaded-both', { down: formatMs(downMs), up: formatMs(upMs) });
}

/** The burst a link gave before it settled, as the page says it under the rate: `burst: 38 Mbps for the first 3.8 MB`. */
export const burstText = (b: Burst): string => t('figure.burst', { rate: formatMbps(b.peakBps), size: t('unit.mb', { value: num(b.bytes / 1e6, 1) }) });

/** A bufferbloat grade with the latency it adds. */
export const bloatText = (b: { grade: string; increaseMs: number }): string => t('figure.bloat', { grade: b.grade, increase: formatMs(b.increaseMs) });

/** Packet loss to the tenth of a percent. */
export const lossText = (percent: number): string => t('unit.percent', { value: num(percent, 1) });

/** The spread of a set of round trips in ms; undefined when there are none. */
export interface Spread {
  count: number;
  min: number;
  median: number;
  p90: number;
  /** Mean absolute difference of consecutive samples (the speed-test library's jitter); null under two samples. */
  jitter: number | null;
}

/** The spread by the speed-test library's own percentile and jitter (src/common/speedtest/latency-quality.ts), so the median matches its figure. */
export function spread(samples: number[]): Spread | undefined {
  if (samples.length === 0) return undefined;
  return {
    count: samples.length,
    min: Math.min(...samples),
    median: percentile(samples, 0.5) ?? 0,
    p90: percentile(samples, 0.9) ?? 0,
    jitter: jitterOf(samples) ?? null,
  };
}

/** Why there is no latency under load: no round trip was timed within a loaded window. */
export function noLoadedLatency(): string {
  return t('figure.no-loaded');
}

export interface Classes {
  streaming?: Quality;
  gaming?: Quality;
  videoCall?: Quality;
}

/**
 * What the streaming, gaming and video-call classes still wait for, or undefined when all three
 * are known. Every class scores the latency added under load (the speed-test library's AIM scoring), so a test
 * without it leaves them all pending; packet loss not measured adds no points.
 */
export function classesWaitFor(classes: Classes, hasLatency: boolean, hasLoaded: boolean, mode: string): string | undefined {
  if (classes.streaming !== undefined && classes.gaming !== undefined && classes.videoCall !== undefined) return undefined;
  if (!hasLatency) return t('figure.classes-wait-idle');
  if (!hasLoaded) return t(mode === 'full' ? 'figure.classes-wait-loaded' : 'figure.classes-wait-loaded-light');
  return t('figure.classes-wait-other');
}

/**
 * At and above this rate a browser is often measuring itself: every transfer goes through
 * JavaScript, Resource Timing and one renderer. On the 2-core machine the tests run on, Chromium
 * read 0.7-4 Gbit/s over loopback (light and full tests) where `netdiag speedtest` read 11-15 Gbit/s
 * from the same server.
 */
export const BROWSER_LIMIT_BPS = 500e6;

/**
 * A note when a result is in the range where the browser may be the limit, and the command line
 * to measure without one (shown apart from the words, left to right in every language, and copied
 * as it is): against the server the result was measured against (`measured`), with the client
 * installed from this page's origin (`page`), which is what `clientPackage` describes.
 */
export function browserLimitNote(downloadBps: number | undefined, uploadBps: number | undefined, origins: { measured: string; page: string }, clientPackage: string | undefined, secure: boolean): { text: string; command: string } | undefined {
  const top = Math.max(downloadBps ?? 0, uploadBps ?? 0);
  if (top < BROWSER_LIMIT_BPS) return undefined;
  const run = `netdiag speedtest --url ${origins.measured}`;
  // Installed from this server when it serves the client; no registry has a package by that name.
  const install = clientInstallCommand(origins.page, clientPackage, secure);
  return { text: t('verdict.browser-limit', { rate: `${num(Math.round(top / 1e6))}\u00a0${t('unit.mbit-axis')}` }), command: install === undefined ? run : `${install} && ${run}` };
}

/**
 * The one command that installs the command-line client from this server
 * (src/features/client-package.ts), or undefined when the server serves none (the page's root
 * element says where: `data-client-package`) or the page is not in a secure context: over plain
 * HTTP anyone on the path could swap the tarball, and `npm install -g` runs its scripts, often as
 * root. A secure context is HTTPS, or a loopback address, where there is no path to be on.
 */
export function clientInstallCommand(origin: string, clientPackage: string | undefined, secure: boolean): string | undefined {
  return clientPackage === undefined || !secure ? undefined : `npm install -g ${origin}${clientPackage}`;
}

/** An axis tick as the language writes numbers: whole from 100 up or when whole, else two significant digits. */
export function tickText(v: number): string {
  if (v >= 100 || Number.isInteger(v)) return num(v);
  return num(v, Math.max(0, 1 - Math.floor(Math.log10(v))));
}

/** A round top for the axis (1, 2 or 5 times a power of ten) and its step, in Mbit/s. */
export function axisScale(maxMbps: number): { top: number; step: number } {
  const rough = Math.max(maxMbps, 0.001) / 4;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = ([1, 2, 5, 10].find((m) => m * power >= rough) ?? 10) * power;
  return { top: step * Math.max(1, Math.ceil(maxMbps / step)), step };
}

/**
 * What the browser's own statistics say of the packet-loss step (web/speedtest/loss-watch.ts): how many
 * messages the speed-test library sent and the most that waited in the browser at once (from the data
 * channel's bufferedAmount at each send), and, when getStats() told, the datagrams the sending
 * connection's transport sent over the step and those the receiving one's received.
 */
export interface LossSending {
  messages: number;
  maxWaiting: number;
  datagrams: number | undefined;
  received: number | undefined;
}

/** The step's datagrams, sent and lost, when the browser counted both ends. */
function datagramCounts(s: LossSending | undefined): { sent: number; lost: number } | undefined {
  if (s?.datagrams === undefined || s.received === undefined || s.datagrams <= 0) return undefined;
  // Never below none: a datagram of the connections' opening may still be on its way when the
  // step's first counts are read, and then arrives inside the step (two, with nothing dropped).
  return { sent: s.datagrams, lost: Math.max(0, s.datagrams - s.received) };
}

/**
 * Messages that may wait in the browser at once and still leave one to a datagram at the step's
 * pace: five of its batches of 10, 50 ms behind. Sending well, Chromium 15x held at most 29 (under
 * CPU load); when its SCTP congestion window collapsed it held 169-490, which then left ~58 to a
 * datagram, so each datagram the relay dropped took ~58 messages (docs/api.md, "Packet loss").
 */
export const LOSS_MAX_WAITING = 50;

/**
 * The step's counts. Where the browser counted the datagrams at both ends, those: the network
 * loses datagrams, and how the browser packed the messages into them does not change it. Else the
 * messages: the speed-test library (@cloudflare/speedtest 1.x) keeps a copy of its tally only when a message
 * comes back, so the last batches sent after the last one to return are missing from both of its
 * counts (it read "107 of 990" when the whole last batch was lost). The page counts every send
 * itself (web/speedtest/loss-watch.ts), and what came back is final in the speed-test library's last copy: sent less
 * returned is the loss. Without the page's count (the channel unseen), the speed-test library's stand.
 */
export function stepLossCounts(library: { numMessagesSent?: number; lostMessages?: readonly number[] } | undefined, sending: LossSending | undefined): { sent: number; lost: number } {
  const datagrams = datagramCounts(sending);
  if (datagrams !== undefined) return datagrams;
  const sentByBrowser = sending?.messages;
  const counted = library?.numMessagesSent ?? 0;
  const lostInCopy = library?.lostMessages?.length ?? 0;
  if (sentByBrowser === undefined || sentByBrowser < counted) return { sent: counted, lost: lostInCopy };
  return { sent: sentByBrowser, lost: sentByBrowser - (counted - lostInCopy) };
}

/**
 * Why the loss counted (`lost`) is not the network's, or undefined when it is: counted in
 * datagrams at both ends, or in messages the browser sent one to a datagram at the step's pace,
 * or none lost. When the browser falls behind, it packs many messages into one datagram and a
 * single datagram lost on the network loses all of them, so a count of messages says more about
 * the browser than the network (17.6% where the relay dropped 9.7%).
 */
export function lossUntrusted(s: LossSending, lost: number): string | undefined {
  if (datagramCounts(s) !== undefined) return undefined;
  // None lost is none lost however they were packed: every datagram that carried one arrived.
  if (lost === 0) return undefined;
  if (s.maxWaiting > LOSS_MAX_WAITING) return t('figure.loss-pacing', { waiting: num(s.maxWaiting), messages: num(s.messages) });
  return undefined;
}

/** What each class is for, as the verdict names it. */
const USES: readonly [keyof Classes, 'verdict.use-streaming' | 'verdict.use-video-calls' | 'verdict.use-gaming'][] = [
  ['streaming', 'verdict.use-streaming'],
  ['videoCall', 'verdict.use-video-calls'],
  ['gaming', 'verdict.use-gaming'],
];

/** The responsiveness estimate as the page shows it: whole RPM and the draft's word for it. */
export const rpmText = (rpm: number): string => t('figure.rpm', { rpm: num(Math.round(rpm)), rating: t(`rpm.${rpmClass(rpm)}`) });

/** The verdict line with the responsiveness estimate after it, when there are both. */
export function verdictWithRpm(verdict: string | undefined, rpm: number | undefined): string | undefined {
  return verdict === undefined || rpm === undefined ? verdict : t('verdict.with-rpm', { verdict, rpm: rpmText(rpm) });
}

/**
 * The result in one line of plain words, first above the figures: what the connection is good for
 * (from the streaming, video-call and gaming classes) and, when something is wrong, what. Latency
 * that grows under load (bufferbloat C or worse) is named as the cause when it is one; without the
 * classes (a test that took no latency under load) the line says only that, or nothing.
 */
export function verdictLine(classes: Classes, bloat: { grade: string; increaseMs: number } | undefined): string | undefined {
  const laggy = bloat !== undefined && ['C', 'D', 'F'].includes(bloat.grade);
  const grown = bloat === undefined ? undefined : { increase: formatMs(bloat.increaseMs), grade: bloat.grade };
  const known = USES.filter(([key]) => classes[key] !== undefined);
  if (known.length < USES.length) return laggy && grown !== undefined ? t('verdict.lag-only', grown) : undefined;
  const by = (...qualities: Quality[]) => USES.filter(([key]) => qualities.includes(classes[key] ?? 'bad')).map(([, use]) => t(use));
  const good = by('great', 'good');
  const fair = by('average');
  const poor = by('poor', 'bad');
  const parts = [
    ...(good.length === 0 ? [] : [t('verdict.good-for', { uses: listed(good) })]),
    ...(fair.length === 0 ? [] : [t('verdict.fair-for', { uses: listed(fair) })]),
    ...(poor.length === 0 ? [] : [t('verdict.poor-for', { uses: listed(poor) })]),
  ];
  const line = capital(parts.join(t('verdict.parts-separator')));
  if (poor.length + fair.length === 0 || !laggy || grown === undefined) return t('verdict.line', { line });
  return t('verdict.line-lag', { line, lag: t('verdict.lag', grown) });
}

const capital = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1);

/**
 * What a kept or shared result was measured against and with, in words: the listed server's
 * name, the streams, the family (IPv4, IPv6); each only when the result says it.
 */
export function setupParts(r: { server?: string; streams?: number; family?: Family }): string[] {
  const streams = r.streams === undefined ? undefined : t(r.streams === 1 ? 'setup.streams-one' : 'setup.streams-many', { count: num(r.streams) });
  const family = r.family === undefined ? undefined : FAMILY_NAME[r.family];
  return [r.server === undefined ? undefined : t('setup.server', { name: r.server }), streams, family].filter((part): part is string => part !== undefined);
}
