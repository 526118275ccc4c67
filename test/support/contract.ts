// Validates responses against the OpenAPI document: the contract every suite checks against.
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';
import { expect } from 'vitest';

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

export const openapi = parse(readFileSync(new URL('../../openapi/openapi.yaml', import.meta.url), 'utf8')) as OpenApiDocument;

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);
// The whole document is one schema resource, so `#/components/...` references resolve inside it.
ajv.addSchema(openapi, 'openapi');

function resolve<T>(value: T & { $ref?: string }): T {
  if (value.$ref === undefined) return value;
  const path = value.$ref.replace(/^#\//, '').split('/');
  let node: unknown = openapi;
  for (const key of path) node = (node as Record<string, unknown>)[key];
  return node as T;
}

function pointer(schema: Schema): Schema {
  // Re-express local references relative to the registered document.
  return JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"openapi#/components/')) as Schema;
}

export interface Observed {
  status: number;
  headers: Headers;
  body: unknown;
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
  expect(documented, `${method} ${template} documents status ${res.status}`).toBeDefined();
  if (documented === undefined) return;
  const response = resolve(documented);

  for (const [name, raw] of Object.entries(response.headers ?? {})) {
    const header = resolve(raw as Schema & { $ref?: string }) as { required?: boolean; schema?: Schema };
    const value = res.headers.get(name);
    if (header.required === true) expect(value, `header ${name} on ${res.status}`).not.toBeNull();
    if (value !== null && header.schema !== undefined) {
      const schema = pointer(header.schema);
      const typed = schema.type === 'integer' ? Number(value) : value;
      const ok = ajv.validate(schema, typed);
      expect(ok, `header ${name}=${value}: ${ajv.errorsText()}`).toBe(true);
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
  const ok = ajv.validate(pointer(media.schema), res.body);
  expect(ok, `body of ${method} ${template} ${res.status}: ${ajv.errorsText()}`).toBe(true);
}

/** Validates a value against a named component schema. */
export function expectSchema(name: string, value: unknown): void {
  const ok = ajv.validate({ $ref: `openapi#/components/schemas/${name}` }, value);
  expect(ok, `${name}: ${ajv.errorsText()}`).toBe(true);
}
