// What the monitor's page shows of its history (/history.json, src/cli/monitor/local-server.ts):
// each check against each server with its state, and the runs. No DOM here, so the rules are
// unit-tested on their own (test/monitor/page.test.ts runs the page whole).
import { resultOfRun } from '../../src/common/speedtest/run-result.js';
import type { SharedResult } from '../../src/common/speedtest/share.js';

/** A check against a server as the monitor holds it now. */
export interface CheckState {
  check: string;
  server: string;
  /** Breaches in a row, up to now. */
  streak: number;
  /** An alert was sent and no recovery since. */
  alerting: boolean;
  /** When it runs next (ISO 8601), or null: not scheduled (imported runs, or a check no longer configured). */
  next_run_at: string | null;
}

/** A recorded run, its figures the scalar ones (numbers and text). */
export interface MonitorRun {
  check: string;
  server: string;
  started_at: string;
  /** ok: it ran; failed: it did not (a breach); limited: the server's rate limit refused it; skipped: the monitor did not run it (paused: no breach either, docs/monitor.md). */
  outcome: 'ok' | 'failed' | 'limited' | 'skipped';
  ok: boolean;
  error: string | null;
  breaches: string[];
  figures: Record<string, number | string | null>;
  source: 'monitor' | 'import';
  /** The server an `auto` run measured against, chosen at that run (docs/monitor.md, "Choosing the server"); else null. */
  chosen: string | null;
  /** The local address the run was sent from (its check's `source:`); else null. */
  source_address: string | null;
}

export interface MonitorHistory {
  checks: CheckState[];
  runs: MonitorRun[];
  /** The earliest start the runs cover (ISO 8601). */
  since: string;
}

/** The shape /history.json must have, or what is wrong with it. */
export function checkHistory(body: unknown): MonitorHistory | string {
  if (typeof body !== 'object' || body === null) return 'it is not an object';
  const h = body as Partial<MonitorHistory>;
  if (!Array.isArray(h.checks) || !Array.isArray(h.runs) || typeof h.since !== 'string') return 'it lacks checks, runs or since';
  return h as MonitorHistory;
}

/** The state words a check's card leads with. */
export type StateKind = 'alerting' | 'breaching' | 'ok' | 'none';

export function stateOf(state: CheckState, last: MonitorRun | undefined): StateKind {
  if (last === undefined) return 'none';
  if (state.alerting) return 'alerting';
  return state.streak > 0 ? 'breaching' : 'ok';
}

/** What a run measured against: its server, and for `auto` the one chosen at the run ("auto → https://fra.example"). */
export const measuredAgainst = (run: Pick<MonitorRun, 'server' | 'chosen'>): string => (run.chosen === null ? run.server : `${run.server} → ${run.chosen}`);

const sameCheck = (a: { check: string; server: string }, b: { check: string; server: string }) => a.check === b.check && a.server === b.server;

/** A check's last run, if any (runs oldest first). */
export const lastRunOf = (state: CheckState, runs: readonly MonitorRun[]): MonitorRun | undefined => runs.findLast((r) => sameCheck(r, state));

/** Each check against a server whose runs hold speed tests, with those runs as the page's results (oldest first). */
export function speedSeries(runs: readonly MonitorRun[]): { check: string; server: string; results: SharedResult[] }[] {
  const series = new Map<string, { check: string; server: string; results: SharedResult[] }>();
  for (const run of runs) {
    const result = resultOfRun({ startedAt: Date.parse(run.started_at), ok: run.ok, figures: run.figures });
    if (result === undefined) continue;
    const key = `${run.check}\n${run.server}`;
    const entry = series.get(key) ?? { check: run.check, server: run.server, results: [] };
    entry.results.push(result);
    series.set(key, entry);
  }
  return [...series.values()];
}
