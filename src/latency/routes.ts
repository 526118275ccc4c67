import { CACHE } from '../http/headers.js';
import { Problem } from '../http/problems.js';
import { rateLimited } from '../http/rate-limit.js';
import { envelopeSerialized, serialize } from '../http/respond.js';
import type { RouteDefinition } from '../http/router.js';
import type { Handler } from '../http/types.js';
import type { Services } from '../services.js';
import { REGIONS, REGION_IDS, isRegionId } from './regions.js';

export function latencyRoutes(services: Services): RouteDefinition[] {
  // `available` is true exactly when this deployment has a probe for the region (SPEC-NOTES).
  const regionsJson = serialize({
    regions: REGIONS.map((r) => ({ id: r.id, name: r.name, available: services.probedRegions.has(r.id) })),
  });

  const probe: Handler = rateLimited('probe', services, (ctx) => {
    throw new Problem('probe_unavailable', `No probe is configured for region ${ctx.params.region ?? ''} in this deployment.`);
  });

  return [
    { path: '/v1/latency/regions', GET: (ctx) => envelopeSerialized(ctx, regionsJson, CACHE.regions) },
    {
      path: '/v1/latency/regions/:region/probe',
      // An unknown region is a bad parameter (400), refused before it costs the caller quota.
      GET: (ctx) => {
        const region = ctx.params.region ?? '';
        if (!isRegionId(region)) throw new Problem('unknown_region', `Region must be one of ${REGION_IDS.join(', ')}.`);
        return probe(ctx);
      },
    },
  ];
}
