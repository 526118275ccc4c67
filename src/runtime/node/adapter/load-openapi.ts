import { OPENAPI_ENCODED, OPENAPI_JSON } from '../../../generated/openapi-document.js';
import type { PrecompressedAsset } from '../../../core/http/static-asset.js';

/** The source of the document: the generated module is built from it (scripts/generate.mjs). */
export const OPENAPI_PATH = new URL('../../../../openapi/openapi.yaml', import.meta.url);

/** The document's text with its compressed forms, made at build, handed to the app as data. */
export function loadOpenApi(): PrecompressedAsset {
  return { text: OPENAPI_JSON, ...OPENAPI_ENCODED };
}
