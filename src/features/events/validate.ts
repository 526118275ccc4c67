import type { ErrorObject } from 'ajv';
import { DECLARED_PROPERTIES, validate as compiled } from '../../generated/event-validator.js';
import type { EventName } from '../../common/event-names.js';
import type { AnalyticsEvent } from '../../core/ports/event-sink.js';

type Validation = { ok: true; event: AnalyticsEvent } | { ok: false; reason: string };

/** The compiled validator's face: Ajv's standalone functions keep their errors on themselves. */
const validateEvent = compiled as ((data: unknown) => boolean) & { errors?: ErrorObject[] | null };

function describe(error: ErrorObject): string {
  // `/properties/duration_ms` reads better as `properties.duration_ms`.
  const at = error.instancePath === '' ? 'the event' : error.instancePath.slice(1).replaceAll('/', '.');
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'additionalProperties':
      return `${at} has an undeclared field "${String(params.additionalProperty)}"`;
    case 'required':
      return `${at === 'the event' ? '' : `${at}.`}${String(params.missingProperty)} is required`;
    case 'enum':
      return `${at} must be one of ${(params.allowedValues as unknown[]).join(', ')}`;
    case 'format':
      return `${at} must be a ${String(params.format).toUpperCase()}`;
    default:
      return `${at} ${error.message ?? 'is invalid'}`;
  }
}

/**
 * How specific a fault is, most specific first: a value that was sent and is wrong names what the
 * client did; an undeclared field is often a misspelt one; a missing field says least, and may be
 * missing only because another was misspelt. So `{"event":"bogus"}` is told its event name is
 * unknown before it is told that `properties` is missing.
 */
function rank(error: ErrorObject): number {
  if (error.keyword === 'required') return 2;
  if (error.keyword === 'additionalProperties') return 1;
  return 0;
}

/** `String.prototype.isWellFormed` (ES2024; Node 20+ and workerd have it, the ES2023 lib does not type it). */
const isWellFormed = (text: string): boolean => (text as string & { isWellFormed(): boolean }).isWellFormed();

/**
 * The first declared property whose string is not well-formed Unicode. JSON's `\ud800` escape
 * makes a lone surrogate, whose handling RFC 8259 §8.2 calls unpredictable and which no UTF-8
 * text can carry, so forwarding one would hand the sink text it cannot encode faithfully. The
 * enumerated fields refuse such text by value already; this catches free text (`tool_version`).
 */
function illFormedProperty(properties: unknown): string | undefined {
  if (properties === null || typeof properties !== 'object') return undefined;
  for (const key of DECLARED_PROPERTIES) {
    const value = Object.hasOwn(properties, key) ? (properties as Record<string, unknown>)[key] : undefined;
    if (typeof value === 'string' && !isWellFormed(value)) return key;
  }
  return undefined;
}

const illFormed = (key: string): string => `properties.${key} must be well-formed Unicode text (it holds a lone surrogate)`;

/** The one fault to report: the first of the most specific kind, in the document's field order. */
function mostSpecific(body: unknown, errors: readonly ErrorObject[]): string {
  let best: ErrorObject | undefined;
  for (const error of errors) if (best === undefined || rank(error) < rank(best)) best = error;
  // Ill-formed text is a wrong value as well: it comes before undeclared and missing fields.
  if (best === undefined || rank(best) > 0) {
    const key = body !== null && typeof body === 'object' ? illFormedProperty((body as { properties?: unknown }).properties) : undefined;
    if (key !== undefined) return illFormed(key);
  }
  return best === undefined ? 'the event is invalid' : describe(best);
}

/**
 * The event validator, compiled from the OpenAPI document's `AnalyticsEvent` schema at build time
 * (scripts/generate.mjs, Ajv standalone code), so the document and the intake cannot disagree
 * (the API contract) and no runtime compiles code from strings (Workers refuse it). It collects every
 * error (Ajv's `allErrors`, which costs a valid event nothing measurable: docs/benchmarks.md,
 * "Per-operation costs"), so the one reported is the most specific (`rank`), not the first the schema
 * happens to check. Strings must also be well-formed Unicode. Undeclared top-level fields fail the schema (`additionalProperties:
 * false`); undeclared keys in `properties` are dropped by copying only the declared ones into a
 * fresh object, which is also why `__proto__`, `constructor` and friends never reach an object's
 * prototype (JSON.parse makes them plain own properties, and they are never copied).
 */
export function validateAnalyticsEvent(body: unknown): Validation {
  if (!validateEvent(body)) return { ok: false, reason: mostSpecific(body, validateEvent.errors ?? []) };
  const raw = body as { event: EventName; event_id: string; properties: Record<string, string | number> };
  const properties: Record<string, string | number> = {};
  for (const key of DECLARED_PROPERTIES) {
    if (Object.hasOwn(raw.properties, key)) {
      const value = raw.properties[key] as string | number;
      if (typeof value === 'string' && !isWellFormed(value)) return { ok: false, reason: illFormed(key) };
      properties[key] = value;
    }
  }
  return { ok: true, event: { event: raw.event, event_id: raw.event_id, properties } };
}
