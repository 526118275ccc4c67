import type { Hono } from 'hono';
import type { AppEnv } from '../http/context.js';
import { CACHE } from '../http/headers.js';
import { mountRoute } from '../http/methods.js';
import { Problem } from '../http/problems.js';
import { rateLimit } from '../http/rate-limit.js';
import { envelope } from '../http/respond.js';
import type { Services } from '../services.js';
import { REGIONS, REGION_IDS, isRegionId } from './regions.js';

export function mountLatency(app: Hono<AppEnv>, services: Services): void {
  // `available` is true exactly when this deployment has a probe for the region (SPEC-NOTES).
  const regions = REGIONS.map((r) => ({ id: r.id, name: r.name, available: services.probedRegions.has(r.id) }));
  mountRoute(app, '/v1/latency/regions', {
    GET: [(c) => envelope(c, { regions }, CACHE.regions)],
  });

  mountRoute(app, '/v1/latency/regions/:region/probe', {
    GET: [
      // An unknown region is a bad parameter (400) and is refused before it costs the caller quota.
      async (c, next) => {
        const region = c.req.param('region');
        if (region === undefined || !isRegionId(region)) {
          throw new Problem('unknown_region', `Region must be one of ${REGION_IDS.join(', ')}.`);
        }
        await next();
      },
      rateLimit('probe', services),
      (c) => {
        const region = c.req.param('region') ?? '';
        throw new Problem('probe_unavailable', `No probe is configured for region ${region} in this deployment.`);
      },
    ],
  });
}
