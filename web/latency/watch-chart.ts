// A watch target's chart, SmokePing's way: time across, round trip up (ms), for each span of time
// the median as a line and the min-max band around it, with failed and limited polls marked
// along the top. Drawn at the SVG's own pixel size so its text stays legible on a phone.
import { buckets, type Poll } from '../../src/common/series.js';
import { num, t } from '../i18n/locale.js';
import { axisScale, tickText } from '../speedtest/result-text.js';
import { element } from '../ui/svg.js';

const HEIGHT = 170;
const MARGIN = { left: 52, right: 8, top: 16, bottom: 30 };
/** At most this many spans across: fewer polls than that are drawn one span each. */
const MAX_BUCKETS = 60;

const seconds = (ms: number) => (ms >= 120_000 ? t('unit.min', { value: num(Math.round(ms / 60_000)) }) : t('unit.s', { value: num(Math.round(ms / 1000)) }));

/** Draws one target's polls; `label` is what the page calls the target. */
export function drawWatchChart(svg: SVGSVGElement, label: string, polls: readonly Poll[]): void {
  const width = Math.max(280, Math.round(svg.getBoundingClientRect().width));
  svg.setAttribute('viewBox', `0 0 ${String(width)} ${String(HEIGHT)}`);
  svg.setAttribute('aria-label', t('watch.chart-label', { target: label }));
  const spans = buckets(polls, Math.min(MAX_BUCKETS, polls.length));
  const highest = Math.max(0, ...spans.map((b) => b.max ?? 0));
  const { top, step } = axisScale(highest === 0 ? 1 : highest * 1.1);
  const plotW = width - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const y = (ms: number) => MARGIN.top + plotH - (ms / top) * plotH;
  const nodes: SVGElement[] = [];
  for (let v = 0; v <= top + step / 2; v += step) {
    nodes.push(element('line', { class: 'grid', x1: MARGIN.left, x2: width - MARGIN.right, y1: y(v), y2: y(v) }));
    nodes.push(element('text', { class: 'tick', x: MARGIN.left - 6, y: y(v) + 4, 'text-anchor': 'end' }, tickText(v)));
  }
  nodes.push(element('text', { x: 4, y: 12 }, t('unit.ms-axis')));
  const slot = spans.length === 0 ? plotW : plotW / spans.length;
  const median: string[] = [];
  spans.forEach((b, i) => {
    const x = MARGIN.left + i * slot;
    if (b.min !== null && b.max !== null) {
      nodes.push(element('rect', { class: 'band', x, width: Math.max(1, slot - 1), y: y(b.max), height: Math.max(1, y(b.min) - y(b.max)) }));
    }
    if (b.median !== null) median.push(`${(x + slot / 2).toFixed(1)},${y(b.median).toFixed(1)}`);
    // Failures in red along the top; limited polls in grey: the service refused the rate, the path is not at fault.
    if (b.failed > 0) nodes.push(element('rect', { class: 'failed', x, width: Math.max(2, slot - 1), y: MARGIN.top - 10, height: 6 }, undefined));
    else if (b.limited > 0) nodes.push(element('rect', { class: 'limited', x, width: Math.max(2, slot - 1), y: MARGIN.top - 10, height: 6 }));
  });
  if (median.length > 0) nodes.push(element('polyline', { class: 'median', points: median.join(' ') }));
  nodes.push(element('line', { class: 'baseline', x1: MARGIN.left, x2: width - MARGIN.right, y1: y(0), y2: y(0) }));
  const first = spans[0]?.from ?? 0;
  const last = spans.at(-1)?.to ?? first;
  nodes.push(element('text', { class: 'tick', x: MARGIN.left, y: HEIGHT - 10 }, seconds(0)));
  nodes.push(element('text', { class: 'tick', x: width - MARGIN.right, y: HEIGHT - 10, 'text-anchor': 'end' }, seconds(last - first)));
  nodes.push(element('text', { class: 'tick', x: MARGIN.left + plotW / 2, y: HEIGHT - 10, 'text-anchor': 'middle' }, t('watch.chart-axis')));
  svg.replaceChildren(...nodes);
}
