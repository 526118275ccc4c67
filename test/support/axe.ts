// axe-core (Deque's accessibility engine) run in a page for its WCAG 2.x A and AA rules. The
// page's Content-Security-Policy rightly refuses any script but its own, so the context that
// loads axe must bypass it (`bypassCSP: true`).
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** Injects axe into `page` (once is enough; again is harmless). */
export async function addAxe(page: Page): Promise<void> {
  await page.addScriptTag({ path: AXE });
}

/** The page's violations as axe reports them: rule, impact, help and the nodes at fault. */
export function axeViolations(page: Page): Promise<Violation[]> {
  return page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (context: Document, options: object) => Promise<{ violations: Violation[] }> } }).axe;
    const result = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
    return result.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => ({ target: n.target })) }));
  });
}
