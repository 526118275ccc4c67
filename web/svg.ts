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
