import { notImplemented } from '../http/not-implemented.js';
import { rateLimited } from '../http/rate-limit.js';
import type { RouteDefinition } from '../http/router.js';
import type { Services } from '../services.js';

export function ipRoute(services: Services): RouteDefinition {
  return { path: '/v1/ip', GET: rateLimited('ip', services, notImplemented('GET /v1/ip')) };
}
