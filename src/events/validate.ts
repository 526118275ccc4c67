import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { EventName } from './names.js';

/** A validated event: declared fields only, undeclared `properties` already dropped. */
export interface AnalyticsEvent {
  event: EventName;
  event_id: string;
  properties: Record<string, string | number>;
}

export type Validation = { ok: true; event: AnalyticsEvent } | { ok: false; reason: string };

interface SchemaNode {
  properties?: Record<string, unknown>;
}

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
 * The event validator, compiled once from the OpenAPI document's `AnalyticsEvent` schema, so
 * the document and the intake cannot disagree (spec §2). Undeclared top-level fields fail the
 * schema (`additionalProperties: false`); undeclared keys in `properties` are dropped by
 * copying only the declared ones into a fresh object, which is also why `__proto__`,
 * `constructor` and friends never reach an object's prototype (JSON.parse makes them plain own
 * properties, and they are never copied).
 */
export function eventValidator(openapi: unknown): (body: unknown) => Validation {
  const ajv = new Ajv2020({ strict: false, allErrors: false });
  addFormats.default(ajv, ['uuid']);
  // The whole document is one schema resource, so its `#/components/...` references resolve.
  ajv.addSchema(openapi as object, 'openapi');
  const validate = ajv.compile({ $ref: 'openapi#/components/schemas/AnalyticsEvent' });
  const schemas = (openapi as { components?: { schemas?: Record<string, SchemaNode> } }).components?.schemas;
  const declared = Object.keys(schemas?.AnalyticsProperties?.properties ?? {});
  if (declared.length === 0) throw new Error('the OpenAPI document declares no AnalyticsProperties');

  return (body) => {
    if (!validate(body)) {
      const first = validate.errors?.[0];
      return { ok: false, reason: first === undefined ? 'the event is invalid' : describe(first) };
    }
    const raw = body as { event: EventName; event_id: string; properties: Record<string, string | number> };
    const properties: Record<string, string | number> = {};
    for (const key of declared) {
      if (Object.hasOwn(raw.properties, key)) properties[key] = raw.properties[key] as string | number;
    }
    return { ok: true, event: { event: raw.event, event_id: raw.event_id, properties } };
  };
}
