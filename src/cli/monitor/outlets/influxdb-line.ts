// A run as a point of InfluxDB's line protocol (docs/monitor.md, "InfluxDB"):
//   netdiag_monitor,check=line\ speed,outcome=ok,server=https://x download_mbps=91.4,duration_ms=5012i 1764450000000
// Escaping per the line-protocol reference ("Special characters"): in the measurement, commas and
// spaces; in tag keys, tag values and field keys, commas, equals signs and spaces, each behind a
// backslash. Numbers only in fields, so no string field needs quoting.
import { outcomeOf } from '../setup.js';
import type { RunRecord } from '../store.js';

const MEASUREMENT = 'netdiag_monitor';

/** A tag key, tag value or field key, escaped. */
function escapeKey(text: string): string {
  return text.replace(/[,= ]/g, (c) => `\\${c}`);
}

/**
 * A tag value, escaped. A newline cannot be carried in a tag at all, and a backslash ending a value
 * makes InfluxDB 1.x refuse the line (1.6 keeps `\\` as two characters, 2.x reads it as one): both
 * are written as other characters, a space and a slash, so every name reads the same in either.
 */
function escapeTagValue(text: string): string {
  return escapeKey(text.replace(/[\r\n]+/g, ' ').replace(/\\/g, '/'));
}

/** The run's tags, sorted by key as InfluxDB recommends ("sort tags by key" in its write guide); `source` only when the run was bound to one. */
function tagsOf(run: RunRecord): [string, string][] {
  const source = run.sourceAddress ?? null;
  return [
    ['check', run.check],
    ['outcome', outcomeOf(run)],
    ['server', run.server],
    ...(source === null || source === '' ? [] : [['source', source] as [string, string]]),
  ];
}

/**
 * The run's fields: its numeric figures always as floats, a number without `i` (a figure that is 12 in one run and 12.5
 * in the next must keep one type, or InfluxDB refuses the second), the bytes and the duration as
 * integers. Text figures (a grade, a DNS answer) are left out; NaN and infinities cannot be written.
 */
function fieldsOf(run: RunRecord): string[] {
  const figures = Object.entries(run.figures)
    .filter((entry): entry is [string, number] => typeof entry[1] === 'number' && Number.isFinite(entry[1]))
    .map(([name, value]) => `${escapeKey(name)}=${String(value)}`);
  const integer = (name: string, value: number | null | undefined) => (typeof value === 'number' && Number.isFinite(value) ? [`${name}=${String(Math.round(value))}i`] : []);
  return [...figures, ...integer('bytes_down', run.bytesDown), ...integer('bytes_up', run.bytesUp), ...integer('duration_ms', run.durationMs)];
}

/** The run as one line (no newline), its timestamp its start in ms (written with `precision=ms`). */
export function pointLine(run: RunRecord): string {
  const tags = tagsOf(run)
    .map(([key, value]) => `,${escapeKey(key)}=${escapeTagValue(value)}`)
    .join('');
  return `${MEASUREMENT}${tags} ${fieldsOf(run).join(',')} ${String(Math.round(run.startedAt))}`;
}

/** Runs as a request body or a file: a line each, each ended by a newline. */
export const pointLines = (runs: readonly RunRecord[]): string => runs.map((r) => `${pointLine(r)}\n`).join('');
