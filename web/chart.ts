// The speed test's chart: one bar per transfer, in the order they ran (download, then upload),
// on a y axis in Mbit/s, with the figure each direction reports drawn across its bars. Drawn in
// the SVG's own pixel size (redrawn when it changes) so its text stays legible on a phone.

import { num, t } from './i18n/locale.js';
import { axisScale, tickText } from './report.js';
import { drawToWidth, element } from './svg.js';
const HEIGHT = 200;
const MARGIN = { left: 56, right: 8, top: 12, bottom: 30 };

export interface Transfer {
  bps: number;
  bytes: number;
}

export interface ChartData {
  download: Transfer[];
  upload: Transfer[];
  /** What each direction reports (bits per second), drawn as a dashed line across its bars. */
  reported: { download?: number; upload?: number };
}

const size = (bytes: number) => (bytes >= 1e6 ? t('unit.mb', { value: num(bytes / 1e6, Number.isInteger(bytes / 1e6) ? 0 : 1) }) : t('unit.kb', { value: num(bytes / 1e3) }));
const rate = (bps: number) => `${num(bps / 1e6, 1)} ${t('unit.mbit-axis')}`;
const directionName = (dir: 'down' | 'up') => t(dir === 'down' ? 'speed.key-download' : 'speed.key-upload');

function draw(svg: SVGSVGElement, data: ChartData): void {
  const width = Math.max(280, Math.round(svg.getBoundingClientRect().width));
  svg.setAttribute('viewBox', `0 0 ${String(width)} ${String(HEIGHT)}`);
  const bars = [...data.download.map((t) => ({ ...t, dir: 'down' as const })), ...data.upload.map((t) => ({ ...t, dir: 'up' as const }))];
  const plotW = width - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const max = Math.max(...bars.map((b) => b.bps / 1e6), (data.reported.download ?? 0) / 1e6, (data.reported.upload ?? 0) / 1e6);
  const { top, step } = axisScale(max);
  const y = (mbps: number) => MARGIN.top + plotH - (mbps / top) * plotH;
  const slot = plotW / Math.max(1, bars.length);
  const nodes: SVGElement[] = [];

  for (let tick = 0; tick <= top + step / 2; tick += step) {
    nodes.push(element('line', { x1: MARGIN.left, x2: width - MARGIN.right, y1: y(tick), y2: y(tick), class: 'grid' }));
    nodes.push(element('text', { x: MARGIN.left - 6, y: y(tick) + 4, 'text-anchor': 'end', class: 'tick' }, tickText(tick)));
  }
  nodes.push(element('text', { x: 14, y: MARGIN.top + plotH / 2, transform: `rotate(-90 14 ${String(MARGIN.top + plotH / 2)})`, 'text-anchor': 'middle', class: 'axis' }, t('unit.mbit-axis')));

  bars.forEach((bar, i) => {
    const h = Math.max(1, (bar.bps / 1e6 / top) * plotH);
    const rect = element('rect', { x: MARGIN.left + i * slot + slot * 0.15, width: Math.max(1, slot * 0.7), y: MARGIN.top + plotH - h, height: h, class: bar.dir });
    rect.append(element('title', {}, t('chart.transfer', { direction: directionName(bar.dir), size: size(bar.bytes), rate: rate(bar.bps) })));
    nodes.push(rect);
  });

  // Each direction's span of bars: its reported figure across it, its name under it.
  const spans = [
    { dir: 'down' as const, from: 0, count: data.download.length, reported: data.reported.download, name: directionName('down') },
    { dir: 'up' as const, from: data.download.length, count: data.upload.length, reported: data.reported.upload, name: directionName('up') },
  ];
  for (const span of spans) {
    if (span.count === 0) continue;
    const x1 = MARGIN.left + span.from * slot;
    const x2 = x1 + span.count * slot;
    if (span.reported !== undefined) {
      const line = element('line', { x1, x2, y1: y(span.reported / 1e6), y2: y(span.reported / 1e6), class: `reported ${span.dir}` });
      line.append(element('title', {}, t('chart.reported', { direction: span.name, rate: rate(span.reported) })));
      nodes.push(line);
    }
    const sizes = span.dir === 'down' ? data.download : data.upload;
    const range = `${size(Math.min(...sizes.map((t) => t.bytes)))}–${size(Math.max(...sizes.map((t) => t.bytes)))}`;
    // The long caption where it fits its span (about 6.5 px a character at 12 px), else the name.
    const long = t('chart.span', { direction: span.name, count: num(span.count), range });
    const caption = long.length * 6.5 < x2 - x1 - 8 ? long : span.name;
    nodes.push(element('text', { x: (x1 + x2) / 2, y: HEIGHT - 10, 'text-anchor': 'middle', class: 'axis' }, caption));
  }
  nodes.push(element('line', { x1: MARGIN.left, x2: width - MARGIN.right, y1: y(0), y2: y(0), class: 'baseline' }));
  svg.replaceChildren(...nodes);
}

/** Draws `data` into `svg`, and again whenever the SVG's width changes. */
export function drawChart(svg: SVGSVGElement, data: ChartData): void {
  drawToWidth(svg, () => {
    draw(svg, data);
  });
}
