// The data budget (docs/monitor.md, "A data budget"): before a run, the bytes the monitor's runs
// moved within the budget's window (the history's bytes_down + bytes_up) and this check's last
// run's bytes as the estimate of the next; a run that would pass the budget is skipped, recorded
// with the budget, what is left and the estimate. The whole monitor's budget counts every check's
// runs, a check's own its runs alone; a check under both is held to each.
import type { MonitorCheck, MonitorConfig } from '../monitor-config.js';
import type { RunGate } from '../run-stages.js';
import type { Store } from '../store.js';
import type { BudgetSettings } from './budget-settings.js';

/** The share of a budget used at which the log warns, once per crossing. */
const WARN_AT = 0.8;

/** A budget and where it stands: the whole monitor's (`check` null) or one check's. */
interface BudgetLeft {
  check: string | null;
  budget: BudgetSettings;
  usedBytes: number;
  /** Never below 0: a run already under way when the budget ran out may pass it. */
  remainingBytes: number;
}

/** Each budget the configuration sets, with the bytes moved in its window up to `nowMs`. */
export function budgetsLeft(store: Pick<Store, 'bytesMovedSince'>, config: Pick<MonitorConfig, 'budget' | 'checks'>, nowMs: number): BudgetLeft[] {
  const scopes: [string | null, BudgetSettings | null][] = [[null, config.budget], ...config.checks.map((c): [string, BudgetSettings | null] => [c.name, c.budget])];
  return scopes.flatMap(([check, budget]) => {
    if (budget === null) return [];
    const usedBytes = store.bytesMovedSince(nowMs - budget.periodMs, check ?? undefined);
    return [{ check, budget, usedBytes, remainingBytes: Math.max(0, budget.bytes - usedBytes) }];
  });
}

const DECIMAL: readonly [string, number][] = [['TB', 1e12], ['GB', 1e9], ['MB', 1e6], ['kB', 1e3]];
const BINARY: readonly [string, number][] = [['TiB', 2 ** 40], ['GiB', 2 ** 30], ['MiB', 2 ** 20], ['KiB', 2 ** 10]];

/** Bytes in the units the budget was written in (1.2 GB, 3.5 GiB), to a tenth. */
function bytesText(bytes: number, binary = false): string {
  const [unit, size] = (binary ? BINARY : DECIMAL).find(([, s]) => bytes >= s) ?? ['B', 1];
  return `${size === 1 ? String(bytes) : (bytes / size).toFixed(1)} ${unit}`;
}

const isBinary = (b: BudgetSettings): boolean => /iB\b/.test(b.text);
const scopeText = (left: BudgetLeft): string => (left.check === null ? 'the budget' : "this check's budget");

/** The bytes this check's last run against `server` moved (the estimate of its next), or undefined before any run said. */
function lastRunBytes(store: Pick<Store, 'judgedRuns'>, check: MonitorCheck, server: string): number | undefined {
  const last = store.judgedRuns(check.name, server, 20).find((r) => typeof r.bytesDown === 'number' || typeof r.bytesUp === 'number');
  return last === undefined ? undefined : (last.bytesDown ?? 0) + (last.bytesUp ?? 0);
}

/** Why the run would pass this budget, or undefined: nothing left, or less left than the last run moved. */
function overReason(left: BudgetLeft, estimate: number | undefined): string | undefined {
  const binary = isBinary(left.budget);
  const said = `${scopeText(left)} ${left.budget.text} has ${bytesText(left.remainingBytes, binary)} left`;
  if (left.remainingBytes <= 0) return `${said}; it runs again once older runs leave the window`;
  if (estimate === undefined || estimate <= left.remainingBytes) return undefined;
  return `${said}; this check's last run moved ${bytesText(estimate, binary)}`;
}

/** The history's key for "the log has warned of this budget" (store.stateValue), so a restart does not warn again. */
const warnedKey = (left: BudgetLeft): string => `budget_warned:${left.check === null ? 'monitor' : `check:${left.check}`}`;

/** Says once, in the log, when a budget crosses WARN_AT; its falling below again (the window moved on, a larger budget) lets it warn anew. */
function warnOnce(store: Pick<Store, 'stateValue' | 'setStateValue'>, left: BudgetLeft, log: (line: string) => void): void {
  const key = warnedKey(left);
  const over = left.usedBytes >= WARN_AT * left.budget.bytes;
  const warned = store.stateValue(key) === left.budget.text;
  if (over && !warned) {
    const binary = isBinary(left.budget);
    const whose = left.check === null ? 'the data budget' : `${left.check}'s data budget`;
    log(`${whose} ${left.budget.text} is ${String(Math.floor((left.usedBytes / left.budget.bytes) * 100))}% used: ${bytesText(left.usedBytes, binary)} moved in the window, ${bytesText(left.remainingBytes, binary)} left; a run that would pass it is skipped`);
    store.setStateValue(key, left.budget.text);
  } else if (!over && store.stateValue(key) !== undefined) store.setStateValue(key, undefined);
}

/** What the gate reads as the monitor runs (gates-of.ts GateSources, named here so neither file imports the other). */
interface BudgetSources {
  store: () => Store;
  config: () => MonitorConfig;
  log: (line: string) => void;
}

/** The gate: each budget over this check (the whole monitor's, its own) checked against its last run's bytes. */
export function budgetGate(sources: BudgetSources): RunGate {
  return (check, server) => {
    const store = sources.store();
    const config = sources.config();
    const mine = budgetsLeft(store, { budget: config.budget, checks: config.checks.filter((c) => c.name === check.name) }, Date.now());
    if (mine.length === 0) return Promise.resolve(undefined);
    for (const left of mine) warnOnce(store, left, sources.log);
    const estimate = lastRunBytes(store, check, server);
    const reasons = mine.map((left) => overReason(left, estimate)).filter((r) => r !== undefined);
    return Promise.resolve(reasons[0]);
  };
}

/** The budgets as /history.json carries them for the local page (web/monitor/budget.ts). */
export function budgetsJson(left: readonly BudgetLeft[]): { check: string | null; budget: string; limit_bytes: number; used_bytes: number; remaining_bytes: number; period_days: number }[] {
  return left.map((b) => ({ check: b.check, budget: b.budget.text, limit_bytes: b.budget.bytes, used_bytes: b.usedBytes, remaining_bytes: b.remainingBytes, period_days: b.budget.periodMs / 86_400_000 }));
}
