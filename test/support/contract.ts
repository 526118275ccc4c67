// Validates responses against the OpenAPI document: the contract every suite checks against, in
// Node and in workerd alike. The schemas are compiled ahead of time (scripts/generate.mjs), since
// workerd refuses code generated from strings, so both suites use the same compiled validators.
import { expect } from 'vitest';
import { OPENAPI_JSON } from '../../src/generated/openapi-document.js';
import * as compiled from '../generated/contract-validators.js';

interface Schema {
  [key: string]: unknown;
}
interface ResponseObject {
  $ref?: string;
  headers?: Record<string, { $ref?: string; required?: boolean; schema?: Schema }>;
  content?: Record<string, { schema: Schema }>;
}
interface OpenApiDocument {
  paths: Record<string, Record<string, { responses: Record<string, ResponseObject> }>>;
  components: { schemas: Record<string, Schema>; responses: Record<string, ResponseObject>; headers: Record<string, Schema> };
}
interface ValidationError {
  instancePath: string;
  message?: string;
}
type Validator = ((data: unknown) => boolean) & { errors?: ValidationError[] | null };

export const openapi = JSON.parse(OPENAPI_JSON) as OpenApiDocument;

const validators = compiled as unknown as Record<string, Validator> & { KEYS: Record<string, string> };

/** Runs the validator compiled for `key`; the message lists what failed, as Ajv's errorsText does. */
function check(key: string, value: unknown): { ok: boolean; text: string } {
  const id = validators.KEYS[key];
  const validate = id === undefined ? undefined : validators[id];
  if (validate === undefined) return { ok: false, text: `no compiled schema for ${key}` };
  const ok = validate(value);
  const text = (validate.errors ?? []).map((e) => `${e.instancePath === '' ? 'data' : `data${e.instancePath}`} ${e.message ?? 'is invalid'}`).join(', ');
  return { ok, text };
}

function resolve<T>(value: T & { $ref?: string }): T {
  if (value.$ref === undefined) return value;
  const path = value.$ref.replace(/^#\//, '').split('/');
  let node: unknown = openapi;
  for (const key of path) node = (node as Record<string, unknown>)[key];
  return node as T;
}

export interface Observed {
  status: number;
  headers: Headers;
  body: unknown;
  /** The raw body, for media types that are not JSON. */
  text?: string;
}

/**
 * Asserts that a response is one the document allows: its status is listed for the operation,
 * its body matches the schema for its content type, and every required header is present and
 * valid. `template` is the OpenAPI path (`/v1/latency/regions/{region}/probe`).
 */
export function expectContract(method: string, template: string, res: Observed): void {
  const operation = openapi.paths[template]?.[method.toLowerCase()];
  expect(operation, `${method} ${template} is documented`).toBeDefined();
  const documented = operation?.responses[String(res.status)];
  const at = `${method.toLowerCase()} ${template} ${String(res.status)}`;
  expect(documented, `${method} ${template} documents status ${res.status}`).toBeDefined();
  if (documented === undefined) return;
  const response = resolve(documented);

  for (const [name, raw] of Object.entries(response.headers ?? {})) {
    const header = resolve(raw as Schema & { $ref?: string }) as { required?: boolean; schema?: Schema };
    const value = res.headers.get(name);
    if (header.required === true) expect(value, `header ${name} on ${res.status}`).not.toBeNull();
    if (value !== null && header.schema !== undefined) {
      const typed = header.schema.type === 'integer' ? Number(value) : value;
      const { ok, text } = check(`header ${at} ${name}`, typed);
      expect(ok, `header ${name}=${value}: ${text}`).toBe(true);
    }
  }

  const contentType = (res.headers.get('content-type') ?? '').split(';')[0] ?? '';
  if (response.content === undefined) {
    expect(res.body, 'no body documented').toBeNull();
    return;
  }
  const media = response.content[contentType];
  expect(media, `content type ${contentType} documented for ${res.status}`).toBeDefined();
  if (media === undefined) return;
  // A body that is not JSON (the page, the plain address, the download) is checked as its text.
  const body = contentType.endsWith('json') ? res.body : res.text;
  const { ok, text } = check(`body ${at} ${contentType}`, body);
  expect(ok, `body of ${method} ${template} ${res.status}: ${text}`).toBe(true);
}

/** Validates a value against a named component schema. */
export function expectSchema(name: string, value: unknown): void {
  const { ok, text } = check(`schema ${name}`, value);
  expect(ok, `${name}: ${text}`).toBe(true);
}

/** Whether the document's schema for a parameter allows `value` (a string, as a query sends it). */
export function parameterAllows(method: string, template: string, name: string, value: string): boolean {
  const { ok, text } = check(`parameter ${method.toLowerCase()} ${template} ${name}`, value);
  if (text.startsWith('no compiled schema')) throw new Error(text);
  return ok;
}
