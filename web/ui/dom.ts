// Small helpers the page's parts share: element lookup, API calls and problem text.

/** The element a selector names; the page always has it, so a miss is a bug worth a throw. */
// eslint-disable-next-line @typescript-eslint/no-unnecessary-type-parameters -- the caller names the element type it knows
export function $<T extends HTMLElement = HTMLElement>(selector: string): T {
  const found = document.querySelector<T>(selector);
  if (found === null) throw new Error(`the page has no ${selector}`);
  return found;
}

/** A choice of a select: the value the page reads, and the label the person reads. */
export function option(value: string, label: string): HTMLOptionElement {
  const element = document.createElement('option');
  element.value = value;
  element.textContent = label;
  return element;
}

export function text(selector: string, value: string): void {
  $(selector).textContent = value;
}

/**
 * Gives each body cell its column's heading as `data-label`: on a narrow screen (page.css) a row
 * folds into a card of "heading: value" lines instead of a table wider than the screen.
 */
export function labelCells(table: HTMLTableElement): void {
  const headings = [...(table.tHead?.rows[0]?.cells ?? [])].map((th) => th.textContent.trim());
  for (const row of table.tBodies[0]?.rows ?? []) [...row.cells].forEach((td, i) => (td.dataset.label = headings[i] ?? ''));
}

import { t } from '../i18n/locale.js';

export interface ProblemDoc {
  title?: string;
  detail?: string;
  status?: number;
}

/** The envelope's `data` or the problem, with the route's `RateLimit-Limit` when it has one. */
export type ApiResult<T> = ({ ok: true; data: T } | { ok: false; problem: ProblemDoc }) & { limit?: number };

/** A GET of this server's API: the envelope's `data`, or the problem document (the API contract). */
export async function api<T>(path: string): Promise<ApiResult<T>> {
  try {
    const res = await fetch(path, { headers: { Accept: 'application/json' } });
    const body = (await res.json()) as { data?: T } & ProblemDoc;
    const stated = Number(res.headers.get('ratelimit-limit'));
    const limit = stated > 0 ? { limit: stated } : {};
    if (res.ok && body.data !== undefined) return { ok: true, data: body.data, ...limit };
    return { ok: false, problem: body, ...limit };
  } catch (err) {
    return { ok: false, problem: { title: t('common.network-error'), detail: err instanceof Error ? err.message : String(err) } };
  }
}

export function problemText(problem: ProblemDoc): string {
  return problem.detail ?? problem.title ?? t('common.request-failed');
}

/**
 * A figure as the page shows its results: the value, and under it a line saying how it was reached
 * or why it is missing (`detail`, left out when empty).
 */
export function showFigure(element: HTMLElement, value: string, detail?: string): void {
  const shown = document.createElement('span');
  shown.className = 'value';
  shown.textContent = value;
  const parts: HTMLElement[] = [shown];
  if (detail !== undefined && detail !== '') {
    const why = document.createElement('span');
    why.className = 'detail';
    why.textContent = detail;
    parts.push(why);
  }
  element.replaceChildren(...parts);
}
