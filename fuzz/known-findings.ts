// Findings reported and not yet fixed in production code. The short run in the test suite counts
// an input that breaks one of these invariants instead of failing on it, so the suite stays green
// while the fix is pending, and still fails on anything new; test/fuzz/regressions.test.ts holds
// each finding's input (fuzz/corpus/<target>/regression-*) in a case that runs as `it.fails`
// while its invariant is listed here.
//
// `inputs` are its regression inputs (under fuzz/corpus/), which the short run leaves out of the
// corpus it mutates while the finding is open: they are replayed by regressions.test.ts, and one
// of them costs 100 ms a run. When a finding is fixed, delete its entry here: its test in
// regressions.test.ts becomes a plain `it`, and the short run mutates its inputs again.
import { InvariantViolation } from './invariant.js';

export const KNOWN_FINDINGS: readonly { invariant: string; summary: string; inputs: readonly string[] }[] = [];

/** The invariant of a known finding that `err` reports, or undefined when it is none of them. */
export function knownFinding(err: unknown): string | undefined {
  if (!(err instanceof InvariantViolation)) return undefined;
  return KNOWN_FINDINGS.some((f) => f.invariant === err.invariant) ? err.invariant : undefined;
}
