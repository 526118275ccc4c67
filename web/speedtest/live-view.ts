// What moves while the speed test runs: the rate of the window the running direction is measured over
// (five times a second, web/speedtest/live-rate.ts over the load's own counts, src/common/speedtest/load-loop.ts), drawn
// as it comes, and how long the test has run.
// The area keeps its size before, during and after a test, so nothing below it jumps when the
// final figures arrive; after the test it holds the last drawing, labelled as what it was.
import { element } from '../ui/svg.js';
import { $ } from '../ui/dom.js';
import { liveBps } from './live-rate.js';
import type { LoadDirection } from '../../src/common/speedtest/load-transport.js';
import type { LoadProfile, ByteCount } from '../../src/common/speedtest/working.js';
import { axisScale, formatMbps, tickText } from './result-text.js';
import { num, t } from '../i18n/locale.js';

/** How often the live rate is read and drawn, ms: five times a second (at least four with a timer late). */
const LIVE_TICK_MS = 200;
const HEIGHT = 90;
const MARGIN = { left: 44, right: 6, top: 8, bottom: 8 };

interface Sample {
  at: number;
  direction: LoadDirection;
  bps: number;
}

function draw(svg: SVGSVGElement, samples: readonly Sample[], spanMs: number): void {
  const width = Math.max(240, Math.round(svg.getBoundingClientRect().width));
  svg.setAttribute('viewBox', `0 0 ${String(width)} ${String(HEIGHT)}`);
  const top = axisScale(Math.max(1, ...samples.map((s) => s.bps / 1e6))).top;
  const plotW = width - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const x = (at: number) => MARGIN.left + (at / Math.max(spanMs, 1)) * plotW;
  const y = (bps: number) => MARGIN.top + plotH - (bps / 1e6 / top) * plotH;
  const nodes: SVGElement[] = [
    element('line', { x1: MARGIN.left, x2: width - MARGIN.right, y1: y(0), y2: y(0), class: 'baseline' }),
    element('text', { x: MARGIN.left - 6, y: MARGIN.top + 8, 'text-anchor': 'end', class: 'tick' }, tickText(top)),
    element('text', { x: MARGIN.left - 6, y: y(0), 'text-anchor': 'end', class: 'tick' }, tickText(0)),
  ];
  for (const direction of ['download', 'upload'] as const) {
    const points = samples.filter((s) => s.direction === direction).map((s) => `${x(s.at).toFixed(1)},${y(s.bps).toFixed(1)}`);
    if (points.length > 1) nodes.push(element('polyline', { points: points.join(' '), class: `trend ${direction === 'download' ? 'down' : 'up'}` }));
  }
  svg.replaceChildren(...nodes);
}

export interface Live {
  /** The direction now running and its counts, read at each tick until the next one is followed. */
  follow(direction: LoadDirection, progress: readonly ByteCount[], profile: LoadProfile): void;
  /** Ends the live view: the last drawing stays, labelled. */
  stop(): void;
}

/** Starts the live view for a test that starts now. */
export function startLive(): Live {
  let running: { direction: LoadDirection; progress: readonly ByteCount[]; profile: LoadProfile } | undefined;
  const started = performance.now();
  const samples: Sample[] = [];
  const rate = $('#speed-live-rate');
  const elapsed = $('#speed-live-elapsed');
  const svg = $('#speed-live-chart') as unknown as SVGSVGElement;
  $('#speed-live').dataset.state = 'running';
  rate.textContent = t('live.waiting');
  delete rate.dataset.direction;
  delete rate.dataset.bps;
  svg.replaceChildren();
  const tick = () => {
    const now = performance.now();
    elapsed.textContent = t('unit.s', { value: num((now - started) / 1000, 1) });
    if (running === undefined) return;
    const { direction } = running;
    const bps = liveBps(running.progress, running.profile);
    if (bps === undefined) return;
    rate.textContent = t(direction === 'download' ? 'live.download-now' : 'live.upload-now', { rate: formatMbps(bps) });
    rate.dataset.direction = direction;
    rate.dataset.bps = String(Math.round(bps));
    samples.push({ at: now - started, direction, bps });
    draw(svg, samples, Math.max(now - started, 10_000));
  };
  const timer = setInterval(tick, LIVE_TICK_MS);
  return {
    follow: (direction, progress, profile) => {
      running = { direction, progress, profile };
    },
    stop: () => {
      clearInterval(timer);
      $('#speed-live').dataset.state = 'done';
      if (samples.length > 0) rate.textContent = t('live.after');
      else rate.textContent = '';
    },
  };
}
