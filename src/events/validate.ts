import type { ErrorObject } from 'ajv';
import { DECLARED_PROPERTIES, validate as compiled } from '../generated/event-validator.js';
import type { EventName } from './names.js';

/** A validated event: declared fields only, undeclared `properties` already dropped. */
export interface AnalyticsEvent {
  event: EventName;
  event_id: string;
  properties: Record<string, string | number>;
}

export type Validation = { ok: true; event: AnalyticsEvent } | { ok: false; reason: string };

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
 * The event validator, compiled from the OpenAPI document's `AnalyticsEvent` schema at build time
 * (scripts/generate.mjs, Ajv standalone code), so the document and the intake cannot disagree
 * (spec §2) and no runtime compiles code from strings (Workers refuse it). Undeclared top-level
 * fields fail the schema (`additionalProperties: false`); undeclared keys in `properties` are
 * dropped by copying only the declared ones into a fresh object, which is also why `__proto__`,
 * `constructor` and friends never reach an object's prototype (JSON.parse makes them plain own
 * properties, and they are never copied).
 */
export function validateAnalyticsEvent(body: unknown): Validation {
  if (!validateEvent(body)) {
    const first = validateEvent.errors?.[0];
    return { ok: false, reason: first === undefined ? 'the event is invalid' : describe(first) };
  }
  const raw = body as { event: EventName; event_id: string; properties: Record<string, string | number> };
  const properties: Record<string, string | number> = {};
  for (const key of DECLARED_PROPERTIES) {
    if (Object.hasOwn(raw.properties, key)) properties[key] = raw.properties[key] as string | number;
  }
  return { ok: true, event: { event: raw.event, event_id: raw.event_id, properties } };
}
