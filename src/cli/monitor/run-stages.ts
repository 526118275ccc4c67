// One run of a check in four stages (docs/monitor.md, "History"): run the netdiag command, judge
// what it reported against the check's expectations, record the run and all that follows from it
// in one transaction, then notify. One transaction, so a crash or a refused write leaves the
// history as it was before the run: never a breach without its streak, nor an alert lost between
// the streak that called for it and the outbox that sends it.
import { alertQuoted } from './alert-text.js';
import { afterRun, ALERT_RUNS_SHOWN, alertNotice, recoveryNotice, type Delivery, type KeptNotice, type MissedRun, type Notice } from './alerts.js';
import { figuresOfKind } from './checks/kinds.js';
import { breaches } from './expect.js';
import { AUTO_SERVER, type MonitorCheck } from './monitor-config.js';
import { resolveServer } from '../choose/choose.js';
import { bindingOf, boundClient } from '../api/source.js';
import type { MonitorMetrics } from './monitor-metrics.js';
import { runCheck, type CheckOutcome } from './run-check.js';
import { log, summary } from './setup.js';
import type { AlertState, RunRecord, Store } from './store.js';

/** A run judged: its record, the streak and alert after it, the notice it calls for, its log line. */
interface Judged {
  run: RunRecord;
  state: AlertState;
  /** False for a run the rate limit refused: judged not at all, its streak and alert stand as they were. */
  counted: boolean;
  notice: Notice | undefined;
  line: string;
}

/** What judging reads of the history. */
type HistoryRead = Pick<Store, 'lastMet' | 'alertState' | 'judgedRuns'>;

/** The runs of the streak an alert recounts, this one the newest, each with what it missed in the alert's words (the server's made inert). */
function missedRuns(history: HistoryRead, check: MonitorCheck, run: RunRecord, streak: number, known: Record<string, unknown> | undefined): MissedRun[] {
  const earlier = history.judgedRuns(check.name, run.server, Math.min(streak, ALERT_RUNS_SHOWN) - 1);
  return [run, ...earlier].map((r) => {
    if (!r.ok) return { startedAt: r.startedAt, missed: [`the check did not run: ${alertQuoted(r.error ?? '')}`] };
    const told = breaches(check.expect, r.figures, known, alertQuoted);
    // Judged by expectations a reload has since changed: its own words, made inert.
    return { startedAt: r.startedAt, missed: told.length > 0 ? told : r.breaches.map(alertQuoted) };
  });
}

/** The judge stage: the run against the check's expectations, and the streak and notice that follow. */
function judge(history: HistoryRead, check: MonitorCheck, server: string, startedAt: number, outcome: CheckOutcome, chosen: string | null): Judged {
  const base = { check: check.name, server, startedAt, durationMs: outcome.durationMs, error: outcome.error, chosen, sourceAddress: check.source, bytesDown: outcome.bytes?.down ?? null, bytesUp: outcome.bytes?.up ?? null };
  const before = history.alertState(check.name, server);
  if (outcome.limited) {
    const run: RunRecord = { ...base, ok: false, limited: true, figures: {}, breaches: [] };
    return { run, state: before, counted: false, notice: undefined, line: `${summary(run)}; counted in no streak` };
  }
  const known = history.lastMet(check.name, server);
  // A run that did not run missed everything at once: its reason is said once, in `error`.
  const missed = outcome.ok ? breaches(check.expect, outcome.figures, known) : ['the check did not run'];
  const run: RunRecord = { ...base, ok: outcome.ok, figures: outcome.figures, breaches: missed };
  const { state, send } = afterRun(before, missed.length > 0, check.alertAfter);
  const streakText = missed.length === 0 ? '' : `; breach ${String(state.streak)} in a row${outcome.ok ? `: ${missed.join('; ')}` : ''}`;
  const notice = send === 'alert' ? alertNotice(check.name, server, state.streak, missedRuns(history, check, run, state.streak, known)) : send === 'recovery' ? recoveryNotice(check.name, server, summary(run, alertQuoted)) : undefined;
  return { run, state, counted: true, notice, line: `${summary(run)}${streakText}` };
}

/** The record stage: the run, its streak, its notice for each target and the pruning, in one transaction; the notices as kept. */
function record(store: Store, judged: Judged, targets: readonly string[], pruneBefore: number): KeptNotice[] {
  const { notice } = judged;
  const notices = notice === undefined ? [] : targets.map((target) => ({ notice: JSON.stringify(notice), target }));
  const ids = store.recordRun({ run: judged.run, state: judged.counted ? judged.state : undefined, notices, pruneBefore });
  return notice === undefined ? [] : ids.map((id, i) => ({ id, target: notices[i]?.target ?? '', notice }));
}

/**
 * Why a run of the check against the server is not to run now (paused, over its data budget, the
 * link already busy: gates/), or undefined to run it. Asked before each run, in order; the first
 * reason given is recorded as the run, skipped.
 */
export type RunGate = (check: MonitorCheck, server: string) => Promise<string | undefined>;

/** What a run needs of the monitor. */
export interface RunContext {
  entry: string;
  store: Store;
  notices: Delivery;
  keepMs: number;
  /** Ends a run under way: it is then not recorded. */
  stop: AbortSignal;
  /** The deployment whose list `auto` picks the nearest of: the first URL of `servers:`. */
  listFrom: string | undefined;
  metrics: MonitorMetrics;
  /** Asked before each run, in order (RunGate). */
  gates: readonly RunGate[];
  /** Called once a run is recorded: the outlets (MQTT, InfluxDB) deliver it from the history. */
  recorded: () => void;
}

/** How long asking for the list may take before an `auto` run fails, ms (the round trips have their own bound). */
const LIST_TIMEOUT_MS = 10_000;

/**
 * The server a run measures against: `server` itself, or for `auto` the nearest of `listFrom`'s
 * list at this run, timed from the check's source (src/cli/choose/); or why none could be chosen.
 */
async function serverOfRun(ctx: RunContext, check: MonitorCheck, server: string): Promise<{ url: string } | { error: string }> {
  if (server !== AUTO_SERVER) return { url: server };
  if (ctx.listFrom === undefined) return { error: 'auto: no deployment to ask for the list' };
  try {
    // The list asked and the servers timed from the check's source, checked as the command checks
    // it (an address of this host; its family holds every connection), as the run's own will be.
    const binding = await bindingOf(check.source === null ? {} : { source: check.source });
    const chosen = await resolveServer(AUTO_SERVER, await boundClient(ctx.listFrom, LIST_TIMEOUT_MS, binding), binding);
    return { url: chosen.url };
  } catch (err) {
    return { error: `auto: ${err instanceof Error ? err.message : String(err)}` };
  }
}

/** The first gate's reason to skip the run, or undefined; a gate that fails is said and lets the run go (a fault of its own never stops a measurement). */
async function skipReason(ctx: RunContext, check: MonitorCheck, server: string): Promise<string | undefined> {
  for (const gate of ctx.gates) {
    const reason = await gate(check, server).catch((err: unknown) => {
      log(`${check.name} on ${server}: a gate could not say whether to run (${err instanceof Error ? err.message : String(err)}); it runs`);
      return undefined;
    });
    if (reason !== undefined) return reason;
  }
  return undefined;
}

/** A run not run, recorded with why: judged not at all, its streak and alert stand as they were. */
function recordSkipped(ctx: RunContext, check: MonitorCheck, server: string, startedAt: number, reason: string): void {
  const run: RunRecord = { check: check.name, server, startedAt, durationMs: 0, ok: false, error: reason, figures: {}, breaches: [], chosen: null, sourceAddress: check.source, skipped: reason };
  const state = ctx.store.alertState(check.name, server);
  ctx.store.recordRun({ run, notices: [], pruneBefore: Date.now() - ctx.keepMs });
  ctx.metrics.observe(run, state, figuresOfKind(check.run));
  log(`${check.name} on ${server}: skipped: ${reason}; counted in no streak`);
  ctx.recorded();
}

/** One run of the check against the server, stage by stage: (gates,) (for `auto`, choose,) run, judge, record, notify. */
export async function runInStages(ctx: RunContext, check: MonitorCheck, server: string): Promise<void> {
  const startedAt = Date.now();
  const skip = await skipReason(ctx, check, server);
  // A stop while a gate sampled the link: nothing recorded, as for a run under way.
  const stopped = (): boolean => ctx.stop.aborted;
  if (stopped()) return;
  if (skip !== undefined) {
    recordSkipped(ctx, check, server, startedAt, skip);
    return;
  }
  const target = await serverOfRun(ctx, check, server);
  const outcome: CheckOutcome = 'url' in target ? await runCheck(ctx.entry, check, target.url, ctx.stop) : { ok: false, limited: false, error: target.error, figures: {}, bytes: null, durationMs: Date.now() - startedAt };
  if (stopped()) return;
  const judged = judge(ctx.store, check, server, startedAt, outcome, server === AUTO_SERVER && 'url' in target ? target.url : null);
  const kept = record(ctx.store, judged, ctx.notices.targets, Date.now() - ctx.keepMs);
  ctx.metrics.observe(judged.run, judged.state, figuresOfKind(check.run));
  // An `auto` run names the server it chose, in the log as in the history.
  const chosen = judged.run.chosen ?? undefined;
  log(`${check.name} on ${server}${chosen === undefined ? '' : ` (${chosen})`}: ${judged.line}`);
  ctx.notices.deliver(kept);
  ctx.recorded();
}
