// The monitor's Prometheus metrics (docs/monitor.md, "Prometheus"), served by its local server
// (local-server.ts): the latest figure of each check against each server, its run counts by
// outcome, its breaches in a row, whether an alert is out, and when it last ran and runs next; for
// an `auto` entry, which server its last run chose.
import { Counter, Gauge, Registry } from 'prom-client';
import type { Figure } from './checks/check-kind.js';
import { AUTO_SERVER } from './monitor-config.js';
import { outcomeOf } from './setup.js';
import type { AlertState, RunRecord } from './store.js';

/** A data budget as it stands (gates/budget.ts BudgetLeft; restated so the metrics import nothing of the gates, which import the run's stages). */
interface BudgetGauge {
  check: string | null;
  budget: { text: string; bytes: number };
  usedBytes: number;
  remainingBytes: number;
}

export interface MonitorMetrics {
  /** Notes a finished run, the alert state after it, and which of its check's figures are numbers to show. */
  observe(run: RunRecord, state: AlertState, figures: readonly Figure[]): void;
  /** Notes when a check runs next. */
  scheduled(check: string, server: string, atMs: number): void;
  /** When each check against each server runs next, ms since the epoch. */
  nextRuns(): ReadonlyMap<string, number>;
  /** Forgets the next run of every check and server not in `scheduled` (checkKey): after a reload, one no longer configured runs no more. */
  retain(scheduled: ReadonlySet<string>): void;
  /** Sets each data budget's gauges as it stands now (gates/budget.ts budgetsLeft); one no longer configured is removed. */
  budgets(left: readonly BudgetGauge[]): void;
  /** The exposition text, and its content type. */
  text(): Promise<{ body: string; contentType: string }>;
}

/** The key nextRuns() holds a check and server under. */
export const checkKey = (check: string, server: string): string => `${check}\n${server}`;

/** A fresh registry of the monitor's metrics. */
export function monitorMetrics(): MonitorMetrics {
  const registry = new Registry();
  const labels = ['check', 'server'] as const;
  const runs = new Counter({ name: 'netdiag_monitor_runs_total', help: "Runs of a check against a server, by outcome (ok: it ran and reported; failed: it did not run; limited: the server's rate limit refused it; skipped: the monitor did not run it: paused, over its data budget, the link busy).", labelNames: [...labels, 'outcome'], registers: [registry] });
  const breaching = new Gauge({ name: 'netdiag_monitor_breaches_in_a_row', help: 'Runs in a row that missed an expectation or did not run.', labelNames: labels, registers: [registry] });
  const alerting = new Gauge({ name: 'netdiag_monitor_alerting', help: '1 while an alert is out for the check (sent after alert_after breaches, until a recovery).', labelNames: labels, registers: [registry] });
  const last = new Gauge({ name: 'netdiag_monitor_last_run_timestamp_seconds', help: 'When the check last ran (its start), seconds since the epoch.', labelNames: labels, registers: [registry] });
  const next = new Gauge({ name: 'netdiag_monitor_next_run_timestamp_seconds', help: 'When the check runs next, seconds since the epoch.', labelNames: labels, registers: [registry] });
  const figure = new Gauge({ name: 'netdiag_monitor_figure', help: "The last run's numeric figures, as its check names them (download_mbps, latency_ms, rpm, ...); a figure the run did not take is absent.", labelNames: [...labels, 'figure'], registers: [registry] });
  // An info metric (value 1, the fact in a label) rather than a `chosen` label on the series above:
  // those stay one series for `auto` whichever server each run chose, and this holds one series per
  // auto check at a time, its values bounded by the servers the list names.
  const chosen = new Gauge({ name: 'netdiag_monitor_auto_chosen_info', help: 'The server an auto entry chose at its last run (label chosen), 1; absent when that run could choose none.', labelNames: [...labels, 'chosen'], registers: [registry] });

  /** The figure names each check and server last showed, so a later run can remove those it lacks. */
  const shown = new Map<string, Set<string>>();
  /** The server each auto check's last run chose, so the next choice replaces its series. */
  const chose = new Map<string, string>();
  const observeChoice = (run: RunRecord) => {
    const l = { check: run.check, server: run.server };
    const key = checkKey(run.check, run.server);
    const before = chose.get(key);
    const now = run.chosen ?? undefined;
    if (before !== undefined && before !== now) chosen.remove({ ...l, chosen: before });
    if (now === undefined) chose.delete(key);
    else {
      chosen.set({ ...l, chosen: now }, 1);
      chose.set(key, now);
    }
  };
  // scope "monitor" (check "") is the whole monitor's budget, scope "check" one check's own.
  const budgetLabels = ['scope', 'check', 'budget'] as const;
  const budgetLimit = new Gauge({ name: 'netdiag_monitor_budget_limit_bytes', help: 'A data budget (budget:): the bytes it allows in its window (label budget: as written).', labelNames: budgetLabels, registers: [registry] });
  const budgetUsed = new Gauge({ name: 'netdiag_monitor_budget_used_bytes', help: "Bytes the monitor's runs moved (both ways) within the budget's window, up to now.", labelNames: budgetLabels, registers: [registry] });
  const budgetRemaining = new Gauge({ name: 'netdiag_monitor_budget_remaining_bytes', help: 'Bytes left in the budget now (0 when spent); a run that would pass it is skipped.', labelNames: budgetLabels, registers: [registry] });
  const upcoming = new Map<string, number>();
  return {
    observe: (run, state, figures) => {
      const l = { check: run.check, server: run.server };
      runs.inc({ ...l, outcome: outcomeOf(run) });
      breaching.set(l, state.streak);
      alerting.set(l, state.alerting ? 1 : 0);
      last.set(l, run.startedAt / 1000);
      if (run.server === AUTO_SERVER) observeChoice(run);
      // A limited or skipped run took no figures and says nothing of the connection: the last ones stand.
      if (run.limited === true || typeof run.skipped === 'string') return;
      // The last run's figures only: one it did not take (or all, from a run that failed) is
      // removed rather than left to read as current.
      const key = checkKey(run.check, run.server);
      const numbers = figures.filter((f) => f.kind === 'number').flatMap((f): [string, number][] => {
        const value = run.figures[f.name];
        return typeof value === 'number' && Number.isFinite(value) ? [[f.name, value]] : [];
      });
      for (const name of shown.get(key) ?? []) if (!numbers.some(([n]) => n === name)) figure.remove({ ...l, figure: name });
      for (const [name, value] of numbers) figure.set({ ...l, figure: name }, value);
      shown.set(key, new Set(numbers.map(([name]) => name)));
    },
    scheduled: (check, server, atMs) => {
      next.set({ check, server }, atMs / 1000);
      upcoming.set(checkKey(check, server), atMs);
    },
    nextRuns: () => upcoming,
    retain: (scheduled) => {
      for (const key of [...upcoming.keys()]) {
        if (scheduled.has(key)) continue;
        upcoming.delete(key);
        const [check = '', server = ''] = key.split('\n');
        // Else NetdiagMonitorOverdue would fire for a check that no longer exists.
        next.remove({ check, server });
      }
    },
    budgets: (left) => {
      // Set afresh each time: a budget removed by a reload leaves no series behind.
      for (const gauge of [budgetLimit, budgetUsed, budgetRemaining]) gauge.reset();
      for (const b of left) {
        const l = { scope: b.check === null ? 'monitor' : 'check', check: b.check ?? '', budget: b.budget.text };
        budgetLimit.set(l, b.budget.bytes);
        budgetUsed.set(l, b.usedBytes);
        budgetRemaining.set(l, b.remainingBytes);
      }
    },
    text: async () => ({ body: await registry.metrics(), contentType: registry.contentType }),
  };
}
