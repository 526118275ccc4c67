import type { Hono } from 'hono';
import type { AppEnv } from '../http/context.js';
import { CACHE } from '../http/headers.js';
import { mountRoute } from '../http/methods.js';
import { envelope } from '../http/respond.js';
import { SPEED_TEST_CONFIGURATION } from './configuration.js';

export function mountSpeedTest(app: Hono<AppEnv>): void {
  mountRoute(app, '/v1/speed-test/configuration', {
    GET: [(c) => envelope(c, SPEED_TEST_CONFIGURATION, CACHE.configuration)],
  });
}
