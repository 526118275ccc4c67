import { notImplemented } from '../http/not-implemented.js';
import { rateLimited } from '../http/rate-limit.js';
import type { RouteDefinition } from '../http/router.js';
import type { Services } from '../services.js';

export function dnsRoute(services: Services): RouteDefinition {
  return { path: '/v1/dns/resolve', GET: rateLimited('dns', services, notImplemented('DNS resolution')) };
}
