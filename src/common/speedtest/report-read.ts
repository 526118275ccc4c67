// A kept run's figures read through the report's schema (the validator compiled from
// report-schema.ts by scripts/generate.mjs), and what is wrong said in words naming the property;
// the whole report's parsers, which the command line alone needs, are report-parse.ts. Apart from
// report.ts, so the page, which only converts figures, carries no validator.
import type { ErrorObject } from 'ajv';
import { validateSpeedTestFigures } from '../../generated/figures-validator.js';
import type { SpeedTestFigures } from './report.js';
import { FIGURE_NAMES } from './report-schema.js';

/** A parsed report, or what is wrong with it in words naming the property. */
export type ReportRead<T> = { ok: true; report: T } | { ok: false; reason: string };

/** The JSON type of a value, as a schema names it. */
const jsonTypeOf = (value: unknown): string => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value);

/** Ajv's first error in words naming the property (`a.b[2]`, from its JSON pointer) and the value it found. */
function reasonOf(error: ErrorObject | undefined, json: unknown): string {
  if (error === undefined) return 'the report does not fit its schema';
  const steps = error.instancePath.split('/').slice(1).map((part) => part.replaceAll('~1', '/').replaceAll('~0', '~'));
  const path = steps.map((part) => (/^\d+$/.test(part) ? `[${part}]` : `.${part}`)).join('').replace(/^\./, '');
  const value = steps.reduce<unknown>((at, part) => (typeof at === 'object' && at !== null ? (at as Record<string, unknown>)[part] : undefined), json);
  const at = path === '' ? 'the report' : path;
  const inner = (key: unknown) => (path === '' ? String(key) : `${path}.${String(key)}`);
  const p = error.params as Record<string, unknown>;
  const shown = (v: unknown) => JSON.stringify(v);
  switch (error.keyword) {
    case 'additionalProperties': return `${inner(p.additionalProperty)} is not a property this version knows`;
    case 'required': return `${inner(p.missingProperty)} is missing`;
    case 'type': return `${at} is ${jsonTypeOf(value)}, not ${String(p.type).split(',').join(' or ')}`;
    case 'const': return `${at} is ${shown(value)}, not ${shown(p.allowedValue)}`;
    case 'enum': return `${at} is ${shown(value)}, not one of ${(p.allowedValues as unknown[]).map(shown).join(', ')}`;
    case 'minimum': return `${at} is ${shown(value)}, below ${String(p.limit)}`;
    case 'minItems': return `${at} has ${String((value as unknown[]).length)} items, fewer than ${String(p.limit)}`;
    case 'maxItems': return `${at} has ${String((value as unknown[]).length)} items, more than ${String(p.limit)}`;
    default: return `${at} ${error.message ?? 'does not fit its schema'}`;
  }
}

/** A compiled validator's face: Ajv's standalone functions keep their errors on themselves. */
type ReportValidator = ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

/** `json` as a T when the compiled validator takes it, or its first fault in words. */
export function readAgainst<T>(compiled: unknown, json: unknown): ReportRead<T> {
  const validate = compiled as ReportValidator;
  return validate(json) ? { ok: true, report: json as T } : { ok: false, reason: reasonOf(validate.errors?.[0], json) };
}

/** A kept speed-test run's figures (any version's report, or a page result imported as a run), checked; the rest of it is left out. */
export function readSpeedTestFigures(json: unknown): ReportRead<SpeedTestFigures> {
  const read = readAgainst<SpeedTestFigures>(validateSpeedTestFigures, json);
  if (!read.ok) return read;
  return { ok: true, report: Object.fromEntries(FIGURE_NAMES.map((name) => [name, read.report[name]])) as unknown as SpeedTestFigures };
}
