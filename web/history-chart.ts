// The history's trend: download and upload (Mbit/s) over the tests kept, and under them the
// latency under load (ms), one point per test in the order they ran. Drawn in the SVG's own pixel
// size, as the speed test's chart is, so its text stays legible on a phone.
import { worseLoaded } from '../src/common/speedtest/bufferbloat.js';
import type { SharedResult } from '../src/common/speedtest/share.js';
import { num, t } from './i18n/locale.js';
import { axisScale, tickText } from './report.js';
import { drawToWidth, element } from './svg.js';

const PANEL = 120;
const GAP = 26;
const MARGIN = { left: 56, right: 8, top: 12, bottom: 24 };

interface Series {
  name: string;
  cls: string;
  values: (number | undefined)[];
}


/** One panel: a y axis from 0 and a line per series (a gap where a test has no figure). */
function panel(width: number, top: number, unit: string, series: Series[], count: number): SVGElement[] {
  const plotW = width - MARGIN.left - MARGIN.right;
  const max = Math.max(0, ...series.flatMap((s) => s.values.filter((v): v is number => v !== undefined)));
  const scale = axisScale(max === 0 ? 1 : max);
  const y = (v: number) => top + PANEL - (v / scale.top) * PANEL;
  // Inset by a dot's width, so the first and last tests' dots are whole.
  const inset = 6;
  const x = (i: number) => MARGIN.left + inset + (count === 1 ? (plotW - 2 * inset) / 2 : (i / (count - 1)) * (plotW - 2 * inset));
  const nodes: SVGElement[] = [];
  for (let tick = 0; tick <= scale.top + scale.step / 2; tick += scale.step) {
    nodes.push(element('line', { x1: MARGIN.left, x2: width - MARGIN.right, y1: y(tick), y2: y(tick), class: 'grid' }));
    nodes.push(element('text', { x: MARGIN.left - 6, y: y(tick) + 4, 'text-anchor': 'end', class: 'tick' }, tickText(tick)));
  }
  nodes.push(element('text', { x: 14, y: top + PANEL / 2, transform: `rotate(-90 14 ${String(top + PANEL / 2)})`, 'text-anchor': 'middle', class: 'axis' }, unit));
  for (const s of series) {
    // Runs of consecutive tests with a figure, each its own line; a lone one a dot.
    let run: string[] = [];
    const flush = () => {
      if (run.length > 1) nodes.push(element('polyline', { points: run.join(' '), class: `trend ${s.cls}` }));
      run = [];
    };
    s.values.forEach((v, i) => {
      if (v === undefined) {
        flush();
        return;
      }
      run.push(`${x(i).toFixed(1)},${y(v).toFixed(1)}`);
      const dot = element('circle', { cx: x(i), cy: y(v), r: 3, class: `trend-dot ${s.cls}` });
      dot.append(element('title', {}, t('history.trend-point', { series: s.name, value: `${tickText(v)} ${unit}` })));
      nodes.push(dot);
    });
    flush();
  }
  nodes.push(element('line', { x1: MARGIN.left, x2: width - MARGIN.right, y1: y(0), y2: y(0), class: 'baseline' }));
  return nodes;
}

function draw(svg: SVGSVGElement, results: readonly SharedResult[]): void {
  const width = Math.max(280, Math.round(svg.getBoundingClientRect().width));
  const loadedValues = results.map((r) => worseLoaded(r.loadedDownMs, r.loadedUpMs));
  // The latency panel only when some test measured latency under load (a light test may not).
  const withLoaded = loadedValues.some((v) => v !== undefined);
  const height = MARGIN.top + PANEL + (withLoaded ? GAP + PANEL : 0) + MARGIN.bottom;
  svg.setAttribute('viewBox', `0 0 ${String(width)} ${String(height)}`);
  svg.style.height = `${String(height)}px`;
  const mbps = (bps: number | undefined) => (bps === undefined ? undefined : bps / 1e6);
  const rates: Series[] = [
    { name: t('speed.key-download'), cls: 'down', values: results.map((r) => mbps(r.downloadBps)) },
    { name: t('speed.key-upload'), cls: 'up', values: results.map((r) => mbps(r.uploadBps)) },
  ];
  const loaded: Series[] = [{ name: t('history.key-loaded'), cls: 'loaded', values: loadedValues }];
  svg.replaceChildren(
    ...panel(width, MARGIN.top, t('unit.mbit-axis'), rates, results.length),
    ...(withLoaded ? panel(width, MARGIN.top + PANEL + GAP, t('unit.ms-axis'), loaded, results.length) : []),
    element('text', { x: MARGIN.left + (width - MARGIN.left - MARGIN.right) / 2, y: height - 6, 'text-anchor': 'middle', class: 'axis' }, t('history.trend-axis', { count: num(results.length) })),
  );
}

/** Draws the trend into `svg`, and again whenever its width changes. */
export function drawTrend(svg: SVGSVGElement, results: readonly SharedResult[]): void {
  drawToWidth(svg, () => {
    draw(svg, results);
  });
}
