import { CACHE } from '../../core/http/headers.js';
import { envelopeSerialized, serialize } from '../../core/http/respond.js';
import type { RouteDefinition } from '../../core/http/router.js';
import { SPEED_TEST_CONFIGURATION } from './configuration.js';

const CONFIGURATION_JSON = serialize(SPEED_TEST_CONFIGURATION);

export const speedTestRoute: RouteDefinition = {
  path: '/v1/speed-test/configuration',
  GET: { limit: null, handle: (ctx) => envelopeSerialized(ctx, CONFIGURATION_JSON, CACHE.configuration) },
};
