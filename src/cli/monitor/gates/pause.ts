// Pausing the monitor (docs/monitor.md, "Pausing"): `netdiag monitor pause 2h`, or the local page,
// sets an end time kept in the history (so a restart keeps it); until then each slot is recorded
// as skipped with the end in its reason, never run, never judged, so it neither breaches nor alerts.
import type { RunGate } from '../run-stages.js';
import type { Store } from '../store.js';

/** The history's key for the pause's end (store.stateValue). */
const PAUSED_UNTIL = 'paused_until';

/** The longest pause taken: a month; a longer one is a check to remove from the configuration. */
export const MAX_PAUSE_MS = 30 * 86_400_000;

/** When the pause ends (ms since the epoch), or undefined when the monitor is not paused at `nowMs`. */
export function pausedUntil(store: Pick<Store, 'stateValue'>, nowMs: number): number | undefined {
  const value = Number(store.stateValue(PAUSED_UNTIL));
  return Number.isFinite(value) && value > nowMs ? value : undefined;
}

/** Pauses every check until `untilMs`, rounded up to the second; a pause already set is replaced. The end set. */
export function pauseUntil(store: Pick<Store, 'setStateValue'>, untilMs: number): number {
  const end = Math.ceil(untilMs / 1000) * 1000;
  store.setStateValue(PAUSED_UNTIL, String(end));
  return end;
}

/** Ends a pause (none set is no fault). */
export function resume(store: Pick<Store, 'setStateValue'>): void {
  store.setStateValue(PAUSED_UNTIL, undefined);
}

/** A pause's end as the log, the history, the command and the page say it: to the second (a pause ends on one, pauseUntil). */
export const pauseEndText = (untilMs: number): string => new Date(untilMs).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The reason a paused slot is recorded with, as the log and the history say it. */
const pausedReason = (untilMs: number): string => `paused until ${pauseEndText(untilMs)} (netdiag monitor resume ends it)`;

/** The gate: while paused, every check's slot is skipped with the pause's end as its reason. */
export function pauseGate(sources: { store: () => Store }): RunGate {
  return (): Promise<string | undefined> => {
    const until = pausedUntil(sources.store(), Date.now());
    return Promise.resolve(until === undefined ? undefined : pausedReason(until));
  };
}
