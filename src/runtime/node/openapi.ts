import { OPENAPI_JSON } from '../../generated/openapi-document.js';

/** The source of the document: the generated module is built from it (scripts/generate.mjs). */
export const OPENAPI_PATH = new URL('../../../openapi/openapi.yaml', import.meta.url);

/** Parsed once at start-up and handed to the core as data. */
export function loadOpenApi(): unknown {
  return JSON.parse(OPENAPI_JSON);
}
