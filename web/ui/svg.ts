// SVG elements for the page's charts (the speed test's, the watch's), built by name and attributes.

const SVG = 'http://www.w3.org/2000/svg';

export function element<K extends keyof SVGElementTagNameMap>(name: K, attributes: Record<string, string | number>, text?: string): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

/** Each chart's own redraw on resize, kept with its element: a chart drawn again replaces its observer. */
const resizing = new WeakMap<SVGSVGElement, ResizeObserver>();

/** Draws a chart now, and again whenever the SVG's width changes (it is drawn to its own width). */
export function drawToWidth(svg: SVGSVGElement, draw: () => void): void {
  resizing.get(svg)?.disconnect();
  draw();
  const observer = new ResizeObserver(draw);
  observer.observe(svg);
  resizing.set(svg, observer);
}

/** Where a y axis's unit is drawn, turned a quarter: its baseline this far in, the column it fills this wide. */
export const UNIT_X = 14;
const UNIT_COLUMN = 20;

/** The width of `text` as the chart draws it (class `cls`), measured in `svg`; estimated when the SVG is not laid out. */
function textWidth(svg: SVGSVGElement, text: string, cls: string): number {
  const probe = element('text', { class: cls, x: 0, y: 0 }, text);
  svg.append(probe);
  const width = probe.getComputedTextLength();
  probe.remove();
  return width > 0 ? width : text.length * 7;
}

/**
 * The left margin a y axis needs: the unit's column, the widest of its tick labels, a gap. A fixed
 * margin would let "10,000" run into the turned unit "Mbit/s".
 */
export function axisMargin(svg: SVGSVGElement, ticks: readonly string[]): number {
  return UNIT_COLUMN + Math.ceil(Math.max(0, ...ticks.map((text) => textWidth(svg, text, 'tick')))) + 10;
}
