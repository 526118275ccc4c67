import { CACHE } from '../core/http/headers.js';
import { envelopeSerialized, serialize } from '../core/http/respond.js';
import type { RouteDefinition } from '../core/http/router.js';

/** Health never calls a DNS upstream, so it cannot spend upstream quota (the API contract). */
const HEALTH_JSON = serialize({ status: 'ok', api_version: 'v1', upstream_provider_health: 'not_checked' });

export const healthRoute: RouteDefinition = {
  path: '/v1/health',
  GET: { limit: null, handle: (ctx) => envelopeSerialized(ctx, HEALTH_JSON, CACHE.health) },
};
