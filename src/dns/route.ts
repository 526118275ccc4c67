import type { Hono } from 'hono';
import type { AppEnv } from '../http/context.js';
import { mountRoute } from '../http/methods.js';
import { notImplemented } from '../http/not-implemented.js';
import { rateLimit } from '../http/rate-limit.js';
import type { Services } from '../services.js';

export function mountDns(app: Hono<AppEnv>, services: Services): void {
  mountRoute(app, '/v1/dns/resolve', { GET: [rateLimit('dns', services), notImplemented('DNS resolution')] });
}
