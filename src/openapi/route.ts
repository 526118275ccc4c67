import { CACHE } from '../http/headers.js';
import { jsonReply } from '../http/respond.js';
import type { RouteDefinition } from '../http/router.js';

/**
 * The OpenAPI document, served as is (not in the `{data, meta}` envelope) so that tools that
 * read OpenAPI documents can load it straight from the service.
 */
export function openApiRoute(document: unknown): RouteDefinition {
  const body = JSON.stringify(document);
  return { path: '/v1/openapi.json', GET: { limit: null, handle: (ctx) => jsonReply(ctx, 200, body, 'application/json', CACHE.openapi) } };
}
