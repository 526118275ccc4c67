// When a monitor check runs next (docs/monitor.md, "Schedules"): every fixed interval or by a cron
// expression (croner, a maintained parser, in the machine's time zone, so a daylight-saving change
// moves wall-clock slots as the expression means), each slot moved by the check's own random
// offset within its spread, so many monitors started at the same moment do not all ask a server
// in the same second. The next slot is always the first after now: a run that took long, or a
// machine that slept through several slots, runs once and goes on, with no burst of catch-up runs.
import { Cron } from 'croner';

export type Schedule = { kind: 'every'; ms: number } | { kind: 'cron'; expression: string };

/** A check's schedule with its offset fixed once, when the monitor starts. */
export interface Planned {
  schedule: Schedule;
  /** This check's offset into each slot, ms, within [0, spread). */
  offsetMs: number;
  /** Interval slots count from here (the monitor's start), ms since the epoch. */
  anchorMs: number;
}

/** Plans a schedule: an offset drawn once from [0, spreadMs), by `random` (Math.random by default). */
export function plan(schedule: Schedule, spreadMs: number, nowMs: number, random: () => number = Math.random): Planned {
  return { schedule, offsetMs: Math.floor(random() * spreadMs), anchorMs: nowMs };
}

/** Whether a cron expression parses, or what croner says is wrong with it. */
export function cronProblem(expression: string): string | undefined {
  try {
    new Cron(expression, { paused: true }).stop();
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

/** The first run time (slot plus offset) strictly after `nowMs`. */
export function nextRun(p: Planned, nowMs: number): number {
  if (p.schedule.kind === 'every') {
    const { ms } = p.schedule;
    // Slots at anchor + k·ms; the first k whose run (slot + offset) is after now.
    const k = Math.max(0, Math.floor((nowMs - p.anchorMs - p.offsetMs) / ms) + 1);
    return p.anchorMs + k * ms + p.offsetMs;
  }
  // The first cron slot whose run is after now: the slot after (now - offset).
  const slot = new Cron(p.schedule.expression, { paused: true }).nextRun(new Date(nowMs - p.offsetMs));
  if (slot === null) throw new Error(`the cron expression "${p.schedule.expression}" has no next run`);
  return slot.getTime() + p.offsetMs;
}
