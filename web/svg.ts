// SVG elements for the page's charts (the speed test's, the watch's), built by name and attributes.

const SVG = 'http://www.w3.org/2000/svg';

export function element<K extends keyof SVGElementTagNameMap>(name: K, attributes: Record<string, string | number>, text?: string): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}
