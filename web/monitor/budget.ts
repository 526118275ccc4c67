// The data budgets on the monitor's page (docs/monitor.md, "A data budget"): each budget the
// configuration sets, as /history.json carries it (src/cli/monitor/gates/budget.ts budgetsJson),
// with what is left of it now and what its window has used.
import { $ } from '../ui/dom.js';
import { num, t } from '../i18n/locale.js';

/** A budget as /history.json gives it: the whole monitor's (`check` null) or one check's. */
export interface MonitorBudget {
  check: string | null;
  /** As the configuration writes it: `20 GB per 30 days`. */
  budget: string;
  limit_bytes: number;
  used_bytes: number;
  remaining_bytes: number;
  period_days: number;
}

const DECIMAL: readonly [string, number][] = [['TB', 1e12], ['GB', 1e9], ['MB', 1e6], ['kB', 1e3]];
const BINARY: readonly [string, number][] = [['TiB', 2 ** 40], ['GiB', 2 ** 30], ['MiB', 2 ** 20], ['KiB', 2 ** 10]];

/** Bytes in the units the budget is written in (decimal, or binary for KiB..TiB), to a tenth, in the page's language's digits. */
function bytesText(bytes: number, binary: boolean): string {
  const [unit, size] = (binary ? BINARY : DECIMAL).find(([, s]) => bytes >= s) ?? ['B', 1];
  return `${num(bytes / size, size === 1 ? 0 : 1)} ${unit}`;
}

/** The budgets in /history.json, or none from a monitor that sends none (an older one, or no budget set). */
function budgetsOf(history: object): MonitorBudget[] {
  const budgets = (history as { budgets?: unknown }).budgets;
  return Array.isArray(budgets) ? (budgets as MonitorBudget[]) : [];
}

/** A line per budget under the checks' cards; nothing when no budget is set. */
export function showBudgets(history: object): void {
  const budgets = budgetsOf(history);
  const box = $('#monitor-budgets');
  box.hidden = budgets.length === 0;
  box.replaceChildren(
    ...budgets.map((b) => {
      const binary = /iB\b/.test(b.budget);
      const line = document.createElement('p');
      line.className = b.remaining_bytes <= 0 ? 'note spent' : 'note';
      const params = { budget: b.budget, remaining: bytesText(b.remaining_bytes, binary), used: bytesText(b.used_bytes, binary) };
      line.textContent = b.check === null ? t('monitor.budget', params) : t('monitor.budget-check', { ...params, check: b.check });
      return line;
    }),
  );
}
