import { notImplemented } from '../http/not-implemented.js';
import { rateLimited } from '../http/rate-limit.js';
import type { RouteDefinition } from '../http/router.js';
import type { Services } from '../services.js';

export function eventsRoute(services: Services): RouteDefinition {
  return { path: '/v1/events', POST: rateLimited('events', services, notImplemented('Analytics intake')) };
}
