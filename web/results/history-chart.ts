// The history's trend: download and upload (Mbit/s) over the tests kept, and under them the
// latency under load (ms). On the main page one point per test in the order they ran; on the
// monitor's page (`byTime`) across by when each ran, with a time axis, since a schedule's runs
// come with gaps. Drawn in the SVG's own pixel size, as the speed test's chart is, so its text
// stays legible on a phone.
import { worseLoaded } from '../../src/common/speedtest/bufferbloat.js';
import type { SharedResult } from '../../src/common/speedtest/share.js';
import { dateTime, num, t } from '../i18n/locale.js';
import { axisScale, tickText } from '../speedtest/result-text.js';
import { axisMargin, drawToWidth, element, UNIT_X } from '../ui/svg.js';

const PANEL = 120;
const GAP = 26;
const MARGIN = { right: 8, top: 12, bottom: 24 };
/** Room a time label takes across, so the labels along the axis never touch. */
const TIME_LABEL_PX = 120;

interface Series {
  name: string;
  cls: string;
  values: (number | undefined)[];
}

/** Where each test sits across the plot, from its left edge: by order, or by time. */
interface Across {
  left: number;
  x: (i: number) => number;
}

/** A panel's y axis from 0: its top and step, and its tick labels. */
function yAxis(series: Series[]): { top: number; step: number; ticks: string[] } {
  const max = Math.max(0, ...series.flatMap((s) => s.values.filter((v): v is number => v !== undefined)));
  const scale = axisScale(max === 0 ? 1 : max);
  const ticks: string[] = [];
  for (let tick = 0; tick <= scale.top + scale.step / 2; tick += scale.step) ticks.push(tickText(tick));
  return { ...scale, ticks };
}

/** One panel: a y axis from 0 and a line per series (a gap where a test has no figure). */
function panel(width: number, top: number, unit: string, series: Series[], across: Across): SVGElement[] {
  const { left, x } = across;
  const scale = yAxis(series);
  const y = (v: number) => top + PANEL - (v / scale.top) * PANEL;
  const nodes: SVGElement[] = [];
  scale.ticks.forEach((text, i) => {
    const tick = i * scale.step;
    nodes.push(element('line', { x1: left, x2: width - MARGIN.right, y1: y(tick), y2: y(tick), class: 'grid' }));
    nodes.push(element('text', { x: left - 6, y: y(tick) + 4, 'text-anchor': 'end', class: 'tick' }, text));
  });
  nodes.push(element('text', { x: UNIT_X, y: top + PANEL / 2, transform: `rotate(-90 ${String(UNIT_X)} ${String(top + PANEL / 2)})`, 'text-anchor': 'middle', class: 'axis' }, unit));
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
  nodes.push(element('line', { x1: left, x2: width - MARGIN.right, y1: y(0), y2: y(0), class: 'baseline' }));
  return nodes;
}

/** The tests across the plot: evenly in order, or at their times between the first and the last. */
function acrossOf(results: readonly SharedResult[], left: number, width: number, byTime: boolean): Across {
  // Inset by a dot's width, so the first and last tests' dots are whole.
  const inset = 6;
  const plotW = width - left - MARGIN.right - 2 * inset;
  const first = results[0]?.at ?? 0;
  const span = (results.at(-1)?.at ?? first) - first;
  const count = results.length;
  if (byTime && span > 0) return { left, x: (i) => left + inset + (((results[i]?.at ?? first) - first) / span) * plotW };
  return { left, x: (i) => left + inset + (count === 1 ? plotW / 2 : (i / (count - 1)) * plotW) };
}

/** Dates along the bottom, as many as fit apart: the day when the runs span days, else the time of day. */
function timeAxis(results: readonly SharedResult[], left: number, width: number, y: number): SVGElement[] {
  const first = results[0]?.at ?? 0;
  const last = results.at(-1)?.at ?? first;
  const inset = 6;
  const plotW = width - left - MARGIN.right - 2 * inset;
  const days = (last - first) / 86_400_000;
  const fit = Math.max(2, Math.min(6, Math.floor(plotW / TIME_LABEL_PX) + 1));
  // Dates a day apart at least, so no two labels name the same day.
  const count = days >= 2 ? Math.max(2, Math.min(fit, Math.floor(days) + 1)) : fit;
  const style: Intl.DateTimeFormatOptions = days >= 2 ? { month: 'short', day: 'numeric' } : { hour: 'numeric', minute: '2-digit' };
  return Array.from({ length: count }, (_, i) => {
    const at = first + ((last - first) * i) / (count - 1);
    // The first label starts at its tick and the last ends at its, so neither leaves the chart.
    const anchor = i === 0 ? 'start' : i === count - 1 ? 'end' : 'middle';
    return element('text', { x: left + inset + (plotW * i) / (count - 1), y, 'text-anchor': anchor, class: 'axis time' }, dateTime(at, style));
  });
}

function draw(svg: SVGSVGElement, results: readonly SharedResult[], byTime: boolean): void {
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
  // One left edge for both panels, wide enough for the wider of their tick labels.
  const left = axisMargin(svg, [...yAxis(rates).ticks, ...(withLoaded ? yAxis(loaded).ticks : [])]);
  const across = acrossOf(results, left, width, byTime);
  const bottom = byTime ? timeAxis(results, left, width, height - 6) : [element('text', { x: left + (width - left - MARGIN.right) / 2, y: height - 6, 'text-anchor': 'middle', class: 'axis' }, t('history.trend-axis', { count: num(results.length) }))];
  svg.replaceChildren(...panel(width, MARGIN.top, t('unit.mbit-axis'), rates, across), ...(withLoaded ? panel(width, MARGIN.top + PANEL + GAP, t('unit.ms-axis'), loaded, across) : []), ...bottom);
}

/** Draws the trend into `svg`, and again whenever its width changes; `byTime` sets the tests across by when they ran, with dates along the bottom. */
export function drawTrend(svg: SVGSVGElement, results: readonly SharedResult[], options: { byTime?: boolean } = {}): void {
  drawToWidth(svg, () => {
    draw(svg, results, options.byTime === true);
  });
}
