// /latest.json (docs/monitor.md, "Latest results"): each configured check against each server as a
// dashboard reads it (Home Assistant's REST sensor, homepage's customapi widget): its state, the
// streak, the last run with its outcome and each figure with its unit, when it runs next, and
// whether the monitor is paused. Small and read often, so it reads the newest runs only.
import type { Figure } from './checks/check-kind.js';
import { figuresOfKind } from './checks/kinds.js';
import type { MonitorConfig } from './monitor-config.js';
import { checkKey } from './monitor-metrics.js';
import { outcomeOf } from './setup.js';
import type { RunRecord, Store } from './store.js';
import { pauseEndText, pausedUntil } from './gates/pause.js';

/** The newest runs read for each answer: a pair with none among them takes its last judged run instead. */
const NEWEST_RUNS = 500;

/** The four states, as a dashboard's template compares them. */
type LatestState = 'no_run_yet' | 'meeting' | 'breaching' | 'alerting';

const iso = (ms: number): string => new Date(ms).toISOString();

/** A figure's value as a dashboard reads it: a finite number or text, else null. */
const scalar = (value: unknown): number | string | null => (typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value)) ? value : null);

/** A figure's unit: a number's own (Mbps, ms, %, ...); a grade and text have none. */
const unitOf = (figure: Figure): string | null => (figure.kind === 'number' ? figure.unit : null);

/** Every figure the check's kind reports, each with the run's value (null when it took none) and its unit: the same keys run after run, for a template. */
const figuresWithUnits = (figures: readonly Figure[], run: RunRecord | undefined) => Object.fromEntries(figures.map((f) => [f.name, { value: scalar(run?.figures[f.name]), unit: unitOf(f) }]));

function stateOf(last: RunRecord | undefined, state: { streak: number; alerting: boolean }): LatestState {
  if (last === undefined) return 'no_run_yet';
  if (state.alerting) return 'alerting';
  return state.streak > 0 ? 'breaching' : 'meeting';
}

/** The last run of each check and server among the newest runs recorded. */
function lastRuns(store: Store): Map<string, RunRecord> {
  const last = new Map<string, RunRecord>();
  for (const run of store.runsAfter(Math.max(0, store.lastRunId() - NEWEST_RUNS), NEWEST_RUNS)) if (run.source !== 'import') last.set(checkKey(run.check, run.server), run);
  return last;
}

/** The body of /latest.json at `nowMs`. */
export function latestJson(store: Store, config: MonitorConfig, nextRuns: ReadonlyMap<string, number>, nowMs: number): string {
  const newest = lastRuns(store);
  const until = pausedUntil(store, nowMs);
  const checks = config.checks.flatMap((check) =>
    config.servers.map((server) => {
      const key = checkKey(check.name, server);
      // The last run of any outcome (a skipped one says why nothing was measured), and the last that measured.
      const last = newest.get(key) ?? store.judgedRuns(check.name, server, 1)[0];
      const measured = last !== undefined && last.ok ? last : store.judgedRuns(check.name, server, 1).find((r) => r.ok);
      const state = store.alertState(check.name, server);
      const next = nextRuns.get(key);
      return {
        check: check.name,
        server,
        run: check.run,
        state: stateOf(last, state),
        streak: state.streak,
        alerting: state.alerting,
        last_run: last === undefined ? null : { started_at: iso(last.startedAt), outcome: outcomeOf(last), error: last.error, breaches: last.breaches, chosen: last.chosen ?? null },
        figures: figuresWithUnits(figuresOfKind(check.run), measured),
        figures_at: measured === undefined ? null : iso(measured.startedAt),
        next_run_at: next === undefined ? null : iso(next),
      };
    }),
  );
  return JSON.stringify({ generated_at: iso(nowMs), paused: until !== undefined, paused_until: until === undefined ? null : pauseEndText(until), checks });
}
