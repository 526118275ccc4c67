import type { Hono } from 'hono';
import type { AppEnv } from '../http/context.js';
import { CACHE } from '../http/headers.js';
import { mountRoute } from '../http/methods.js';
import { envelope } from '../http/respond.js';

/** Health never calls a DNS upstream, so it cannot spend upstream quota (spec §4 rule 4). */
const HEALTH = { status: 'ok', api_version: 'v1', upstream_provider_health: 'not_checked' } as const;

export function mountHealth(app: Hono<AppEnv>): void {
  mountRoute(app, '/v1/health', { GET: [(c) => envelope(c, HEALTH, CACHE.health)] });
}
