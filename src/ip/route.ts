import type { Hono } from 'hono';
import type { AppEnv } from '../http/context.js';
import { mountRoute } from '../http/methods.js';
import { notImplemented } from '../http/not-implemented.js';
import { rateLimit } from '../http/rate-limit.js';
import type { Services } from '../services.js';

export function mountIp(app: Hono<AppEnv>, services: Services): void {
  mountRoute(app, '/v1/ip', { GET: [rateLimit('ip', services), notImplemented('GET /v1/ip')] });
}
