import { CACHE } from '../core/http/headers.js';
import { assetHandler, type PrecompressedAsset } from '../core/http/static-asset.js';
import type { RouteDefinition } from '../core/http/router.js';

/**
 * The OpenAPI document, served as is (not in the `{data, meta}` envelope) so that tools that
 * read OpenAPI documents can load it straight from the service; compressed at build and
 * revalidated by ETag like the page's assets (src/core/http/static-asset.ts).
 */
export function openApiRoute(document: PrecompressedAsset): RouteDefinition {
  return { path: '/v1/openapi.json', GET: { limit: null, handle: assetHandler(document, 'application/json', CACHE.openapi) } };
}
