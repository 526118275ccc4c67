// What a monitor check expects of its figures (docs/monitor.md, "Checks and their figures"): a
// threshold on a number, absolute (">= 40") or relative to the rate the contract promises
// (">= 70% of 500"); a bufferbloat grade at least as good as one ("<= B"); a text figure equal to
// a value ("= ok") or unchanged from the last run that met every expectation ("unchanged": a DNS
// answer that changes). A breach is a figure on the wrong side, or missing: a test that could not
// take the figure did not show it was met.
import type { Figure } from './checks/check-kind.js';

/** Bufferbloat grades, best first (src/common/speedtest/bufferbloat.ts). */
const GRADES = ['A+', 'A', 'B', 'C', 'D', 'F'] as const;

type Operator = '>=' | '>' | '<=' | '<';

export type Expectation =
  | { figure: string; kind: 'number'; op: Operator; value: number; text: string }
  | { figure: string; kind: 'grade'; op: '<=' | '<'; grade: (typeof GRADES)[number]; text: string }
  | { figure: string; kind: 'text'; op: '=' | '!='; value: string; text: string }
  | { figure: string; kind: 'unchanged'; text: string };

/** A text figure's condition: "= value", "!= value" or "unchanged". */
function parseTextExpectation(figure: string, text: string, values: readonly string[] | null): Expectation | string {
  if (text === 'unchanged') return { figure, kind: 'unchanged', text };
  const match = /^(!=|=)\s*(.+)$/.exec(text);
  if (match === null) return `"${text}" is not a condition for ${figure}: write "= value", "!= value" or "unchanged"`;
  const value = (match[2] ?? '').trim();
  if (values !== null && !values.includes(value)) return `"${value}" is not a value ${figure} takes (${values.join(', ')})`;
  return { figure, kind: 'text', op: match[1] as '=' | '!=', value, text };
}

/** A figure and the condition it must meet, or a message that says what is wrong with the condition. */
export function parseExpectation(figure: Figure, condition: string): Expectation | string {
  const text = condition.trim();
  if (figure.kind === 'text') return parseTextExpectation(figure.name, text, figure.values);
  const match = /^(>=|>|<=|<)\s*(.+)$/.exec(text);
  if (match === null) return `"${condition}" is not a condition: write an operator (>=, >, <=, <) and a value, e.g. ">= 40" or ">= 70% of 500"`;
  const op = match[1] as Operator;
  const rest = (match[2] ?? '').trim();
  return figure.kind === 'grade' ? gradeExpectation(figure.name, op, rest, text) : numberExpectation(figure.name, figure.unit, op, rest, text);
}

/** A grade held to "<= B" (B or better) or "< B". */
function gradeExpectation(figure: string, op: Operator, rest: string, text: string): Expectation | string {
  if (op !== '<=' && op !== '<') return `a grade is held to "<= B" (B or better) or "< B" (better than B), not "${op}"`;
  const grade = GRADES.find((g) => g === rest.toUpperCase());
  if (grade === undefined) return `"${rest}" is not a bufferbloat grade (${GRADES.join(', ')})`;
  return { figure, kind: 'grade', op, grade, text };
}

/** A number held to a bound, absolute (">= 40") or a share of the contracted rate (">= 70% of 500"). */
function numberExpectation(figure: string, unit: string, op: Operator, rest: string, text: string): Expectation | string {
  const relative = /^([0-9]+(?:\.[0-9]+)?)\s*%\s*of\s*([0-9]+(?:\.[0-9]+)?)$/.exec(rest);
  const value = relative === null ? Number(rest) : (Number(relative[1]) / 100) * Number(relative[2]);
  if (rest === '' || !Number.isFinite(value)) return `"${rest}" is not a number (of ${unit}), nor a share of one ("70% of 500")`;
  return { figure, kind: 'number', op, value, text };
}

/**
 * Whether `actual` meets the expectation; a missing figure does not. `known` is the figure of the
 * last run that met every expectation, what "unchanged" compares with (none yet: met).
 */
export function meets(e: Expectation, actual: unknown, known?: unknown): boolean {
  if (e.kind === 'unchanged') return typeof actual === 'string' && (known === undefined || known === null || actual === known);
  if (e.kind === 'text') return typeof actual === 'string' && (actual === e.value) === (e.op === '=');
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

/**
 * Each expectation the figures miss, as "download_mbps 12.3 (expected >= 70% of 500)" or
 * 'answers "192.0.2.9" (expected unchanged from "192.0.2.1")'; `known` holds the figures of the
 * last run that met every expectation. `quote` writes a text figure (a server's words): JSON
 * quotes for the history, alert-text.ts's for an alert.
 */
export function breaches(expectations: readonly Expectation[], figures: Readonly<Record<string, unknown>>, known: Readonly<Record<string, unknown>> = {}, quote: (text: string) => string = (text) => JSON.stringify(text)): string[] {
  return expectations
    .filter((e) => !meets(e, figures[e.figure], known[e.figure]))
    .map((e) => {
      const actual = figures[e.figure];
      // A grade as it is written (B), other text quoted ("192.0.2.9"), a number as it is.
      const shown = actual === undefined || actual === null ? 'not measured' : typeof actual === 'string' ? (e.kind === 'grade' ? actual : quote(actual)) : JSON.stringify(actual);
      const before = known[e.figure];
      const expected = e.kind === 'unchanged' ? `unchanged from ${typeof before === 'string' ? quote(before) : JSON.stringify(before)}` : e.text;
      return `${e.figure} ${shown} (expected ${expected})`;
    });
}
