// Which cases of test/timed run. `npm test`'s last step and `npm run test:timed` run CI's
// representative set: one case of each kind that has broken before, a run of about eight minutes
// on two cores. `npm run test:timed:full` (NETDIAG_TIMED=full) runs every cell and every repeat,
// about thirty minutes: after any change to how the speed test measures or reports, before it is
// called done (docs/testing.md, "Timed").

import { describe, it, type TestFunction } from 'vitest';

const setting = process.env.NETDIAG_TIMED;
if (setting !== undefined && setting !== '' && setting !== 'full' && setting !== 'ci') {
  throw new Error(`NETDIAG_TIMED is "${setting}": it is "full" (every timed case) or "ci" (the representative set, as when unset)`);
}

/** Whether every timed case runs, not only CI's representative set. */
export const TIMED_FULL = setting === 'full';

/** The set named in a suite's output, so a run's figures say which set they came from. */
export const TIMED_SET = TIMED_FULL ? 'full' : 'ci';

/** Says, in CI's set, which cases it leaves to the full run: they are not run, not skipped. */
function leftOut(names: readonly string[]): void {
  if (names.length > 0) process.stdout.write(`timed set ci: left to npm run test:timed:full: ${names.join('; ')}\n`);
}

/** `all` in the full run; in CI's set, those `inCi` picks, the others named as left out. */
export function timedCases<T>(all: readonly T[], inCi: (item: T) => boolean, nameOf: (item: T) => string): T[] {
  if (TIMED_FULL) return [...all];
  leftOut(all.filter((item) => !inCi(item)).map(nameOf));
  return all.filter(inCi);
}

/** A test of the full run alone: in CI's set it is named as left out. */
export function fullOnly(name: string, fn: TestFunction, timeout?: number): void {
  if (TIMED_FULL) it(name, fn, timeout);
  else leftOut([name]);
}

/** A suite of the full run alone (its set-up too): in CI's set it is named as left out, and nothing of it runs. */
export function fullOnlySuite(name: string, fn: () => void): void {
  if (TIMED_FULL) describe(name, fn);
  else leftOut([name]);
}

/** `full` repeats in the full run, `ci` in CI's set. */
export const timedRepeats = (full: number, ci: number): number => (TIMED_FULL ? full : ci);
