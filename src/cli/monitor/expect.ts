// What a monitor check expects of its figures (docs/monitor.md, "Expectations"): a threshold on a
// figure the check's `--json` output reports, absolute (">= 40") or relative to the rate the
// contract promises (">= 70% of 500"), or a bufferbloat grade at least as good as one ("<= B").
// A breach is a figure on the wrong side, or missing: a test that could not take the figure did
// not show it was met.

/** The figures a check's JSON reports that an expectation may name, by check. */
export const FIGURES = {
  speedtest: ['download_mbps', 'upload_mbps', 'latency_ms', 'jitter_ms', 'download_loaded_latency_ms', 'upload_loaded_latency_ms', 'loaded_latency_increase_ms', 'packet_loss_percent', 'bufferbloat_grade'],
  rpm: ['rpm', 'rpm_p90'],
} as const;

export type CheckKind = keyof typeof FIGURES;

/** Bufferbloat grades, best first (src/common/speedtest/bufferbloat.ts). */
const GRADES = ['A+', 'A', 'B', 'C', 'D', 'F'] as const;

type Operator = '>=' | '>' | '<=' | '<';

export type Expectation =
  | { figure: string; kind: 'number'; op: Operator; value: number; text: string }
  | { figure: string; kind: 'grade'; op: '<=' | '<'; grade: (typeof GRADES)[number]; text: string };

/** A figure and the condition it must meet, or a message that says what is wrong with the condition. */
export function parseExpectation(figure: string, condition: string): Expectation | string {
  const text = condition.trim();
  const match = /^(>=|>|<=|<)\s*(.+)$/.exec(text);
  if (match === null) return `"${condition}" is not a condition: write an operator (>=, >, <=, <) and a value, e.g. ">= 40" or ">= 70% of 500"`;
  const op = match[1] as Operator;
  const rest = (match[2] ?? '').trim();
  if (figure === 'bufferbloat_grade') {
    if (op !== '<=' && op !== '<') return `a grade is held to "<= B" (B or better) or "< B" (better than B), not "${op}"`;
    const grade = GRADES.find((g) => g === rest.toUpperCase());
    if (grade === undefined) return `"${rest}" is not a bufferbloat grade (${GRADES.join(', ')})`;
    return { figure, kind: 'grade', op, grade, text };
  }
  const relative = /^([0-9]+(?:\.[0-9]+)?)\s*%\s*of\s*([0-9]+(?:\.[0-9]+)?)$/.exec(rest);
  const value = relative === null ? Number(rest) : (Number(relative[1]) / 100) * Number(relative[2]);
  if (rest === '' || !Number.isFinite(value)) return `"${rest}" is not a number, nor a share of one ("70% of 500")`;
  return { figure, kind: 'number', op, value, text };
}

/** Whether `actual` meets the expectation; a missing figure does not. */
export function meets(e: Expectation, actual: unknown): boolean {
  if (e.kind === 'grade') {
    const at = GRADES.indexOf(actual as (typeof GRADES)[number]);
    const bound = GRADES.indexOf(e.grade);
    return at !== -1 && (e.op === '<=' ? at <= bound : at < bound);
  }
  if (typeof actual !== 'number' || !Number.isFinite(actual)) return false;
  switch (e.op) {
    case '>=':
      return actual >= e.value;
    case '>':
      return actual > e.value;
    case '<=':
      return actual <= e.value;
    case '<':
      return actual < e.value;
  }
}

/** Each expectation the figures miss, as "download_mbps 12.3 (expected >= 70% of 500)". */
export function breaches(expectations: readonly Expectation[], figures: Readonly<Record<string, unknown>>): string[] {
  return expectations.filter((e) => !meets(e, figures[e.figure])).map((e) => `${e.figure} ${figures[e.figure] === undefined || figures[e.figure] === null ? 'not measured' : String(figures[e.figure])} (expected ${e.text})`);
}
