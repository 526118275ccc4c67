// The speed test's chart: the rate of each quarter second of the load (src/common/speedtest/working.ts,
// INTERVAL_MS), download then upload, on a y axis in Mbit/s; the window each direction's figure was
// measured over shaded behind its bars, and that figure drawn as a dashed line across the window.
// Drawn in the SVG's own pixel size (redrawn when it changes) so its text stays legible on a phone.

import { INTERVAL_MS } from '../../src/common/speedtest/working.js';
import { num, t } from '../i18n/locale.js';
import { axisScale, tickText } from './result-text.js';
import { axisMargin, drawToWidth, element, UNIT_X } from '../ui/svg.js';
const HEIGHT = 200;
const MARGIN = { right: 8, top: 12, bottom: 30 };
/** Empty slots between the download's bars and the upload's. */
const GAP_SLOTS = 2;

/** One direction as the chart draws it. */
export interface ChartDirection {
  /** The rate in each INTERVAL_MS from the start, bits per second. */
  rates: readonly number[];
  /** The window the figure was measured over, ms since the direction began. */
  window: { startMs: number; endMs: number } | undefined;
  /** What the direction reports (bits per second), drawn as a dashed line across its window. */
  reported: number | undefined;
}

export interface ChartData {
  download: ChartDirection | undefined;
  upload: ChartDirection | undefined;
}

const rate = (bps: number) => `${num(bps / 1e6, 1)} ${t('unit.mbit-axis')}`;
const seconds = (ms: number) => t('unit.s', { value: num(ms / 1000, 2) });
const directionName = (dir: 'down' | 'up') => t(dir === 'down' ? 'speed.key-download' : 'speed.key-upload');

interface Span {
  dir: 'down' | 'up';
  from: number;
  data: ChartDirection;
}

/** The directions that ran, each from its first slot, a gap between them. */
function spans(data: ChartData): Span[] {
  const out: Span[] = [];
  let from = 0;
  for (const [dir, direction] of [['down', data.download], ['up', data.upload]] as const) {
    if (direction === undefined || direction.rates.length === 0) continue;
    out.push({ dir, from, data: direction });
    from += direction.rates.length + GAP_SLOTS;
  }
  return out;
}

function draw(svg: SVGSVGElement, data: ChartData): void {
  const width = Math.max(280, Math.round(svg.getBoundingClientRect().width));
  svg.setAttribute('viewBox', `0 0 ${String(width)} ${String(HEIGHT)}`);
  const all = spans(data);
  const last = all.at(-1);
  const slots = last === undefined ? 1 : last.from + last.data.rates.length;
  const max = Math.max(0, ...all.flatMap((s) => [...s.data.rates, s.data.reported ?? 0].map((bps) => bps / 1e6)));
  const { top, step } = axisScale(max);
  const ticks: number[] = [];
  for (let tick = 0; tick <= top + step / 2; tick += step) ticks.push(tick);
  const left = axisMargin(svg, ticks.map((tick) => tickText(tick)));
  const plotW = width - left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const y = (mbps: number) => MARGIN.top + plotH - (Math.min(mbps, top) / top) * plotH;
  const slot = plotW / Math.max(1, slots);
  const x = (at: number) => left + at * slot;
  const nodes: SVGElement[] = [];

  for (const tick of ticks) {
    nodes.push(element('line', { x1: left, x2: width - MARGIN.right, y1: y(tick), y2: y(tick), class: 'grid' }));
    nodes.push(element('text', { x: left - 6, y: y(tick) + 4, 'text-anchor': 'end', class: 'tick' }, tickText(tick)));
  }
  nodes.push(element('text', { x: UNIT_X, y: MARGIN.top + plotH / 2, transform: `rotate(-90 ${String(UNIT_X)} ${String(MARGIN.top + plotH / 2)})`, 'text-anchor': 'middle', class: 'axis' }, t('unit.mbit-axis')));

  for (const span of all) {
    const name = directionName(span.dir);
    const window = span.data.window;
    // The window first, so the bars are drawn over it.
    if (window !== undefined) {
      const shade = element('rect', { x: x(span.from + window.startMs / INTERVAL_MS), width: ((window.endMs - window.startMs) / INTERVAL_MS) * slot, y: MARGIN.top, height: plotH, class: 'window' });
      shade.append(element('title', {}, t('chart.window', { direction: name, from: seconds(window.startMs), to: seconds(window.endMs) })));
      nodes.push(shade);
    }
    span.data.rates.forEach((bps, i) => {
      const h = Math.max(1, (Math.min(bps / 1e6, top) / top) * plotH);
      const bar = element('rect', { x: x(span.from + i) + slot * 0.1, width: Math.max(1, slot * 0.8), y: MARGIN.top + plotH - h, height: h, class: span.dir });
      bar.append(element('title', {}, t('chart.interval', { direction: name, from: seconds(i * INTERVAL_MS), to: seconds((i + 1) * INTERVAL_MS), rate: rate(bps) })));
      nodes.push(bar);
    });
    const reported = span.data.reported;
    if (reported !== undefined && window !== undefined) {
      const line = element('line', { x1: x(span.from + window.startMs / INTERVAL_MS), x2: x(span.from + window.endMs / INTERVAL_MS), y1: y(reported / 1e6), y2: y(reported / 1e6), class: `reported ${span.dir}` });
      line.append(element('title', {}, t('chart.reported', { direction: name, rate: rate(reported) })));
      nodes.push(line);
    }
    const x1 = x(span.from);
    const x2 = x(span.from + span.data.rates.length);
    // The long caption where it fits its span (about 6.5 px a character at 12 px), else the name.
    const long = t('chart.span', { direction: name, time: seconds(span.data.rates.length * INTERVAL_MS) });
    const caption = long.length * 6.5 < x2 - x1 - 8 ? long : name;
    nodes.push(element('text', { x: (x1 + x2) / 2, y: HEIGHT - 10, 'text-anchor': 'middle', class: 'axis' }, caption));
  }
  nodes.push(element('line', { x1: left, x2: width - MARGIN.right, y1: y(0), y2: y(0), class: 'baseline' }));
  svg.replaceChildren(...nodes);
}

/** Draws `data` into `svg`, and again whenever the SVG's width changes. */
export function drawChart(svg: SVGSVGElement, data: ChartData): void {
  drawToWidth(svg, () => {
    draw(svg, data);
  });
}
