import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

/** The OpenAPI document's path: `openapi/openapi.yaml` at the package root (src/ and dist/ alike). */
export const OPENAPI_PATH = new URL('../../../openapi/openapi.yaml', import.meta.url);

/** Read once at start-up and handed to the core as data. */
export function loadOpenApi(): unknown {
  return parse(readFileSync(OPENAPI_PATH, 'utf8'));
}
