import { CACHE } from '../../core/http/headers.js';
import { Problem } from '../../core/http/problems.js';
import { envelope, envelopeSerialized, serialize } from '../../core/http/respond.js';
import type { RouteDefinition } from '../../core/http/router.js';
import type { Handler } from '../../core/http/types.js';
import { ProbeUnavailable, type LatencyProbes } from '../../core/ports/probe-client.js';
import { REGIONS, REGION_IDS, isRegionId, type RegionId } from '../../common/regions.js';

/** Reported to the microsecond: finer digits would be noise from the timer, not the network. */
const roundMs = (ms: number): number => Math.round(ms * 1000) / 1000;

export function latencyRoutes(probes: LatencyProbes): RouteDefinition[] {
  // `available` is true exactly when this deployment has a probe for the region (docs/api.md).
  const regionsJson = serialize({
    regions: REGIONS.map((r) => ({ id: r.id, name: r.name, available: probes.regions.has(r.id) })),
  });

  const probe: Handler = async (ctx) => {
    const region = ctx.params.region as RegionId;
    if (!probes.regions.has(region)) {
      throw new Problem('probe_unavailable', `No probe is configured for region ${region} in this deployment.`);
    }
    let rtt: number;
    try {
      rtt = await probes.measure(region);
    } catch (err) {
      // The reason stays in the runtime's log; the caller learns only that the probe is away.
      if (err instanceof ProbeUnavailable) {
        throw new Problem('probe_unavailable', `The probe for region ${region} is not answering; try again later.`);
      }
      throw err;
    }
    return envelope(
      ctx,
      {
        region,
        edge_to_region_rtt_ms: roundMs(rtt),
        // Client-side figures are the client's to measure (the API contract).
        client_to_api_rtt_ms: null,
        client_observed_total_rtt_ms: null,
        measurement_scope: 'provider_edge_to_regional_probe',
      },
      CACHE.noStore,
    );
  };

  return [
    { path: '/v1/latency/regions', GET: { limit: null, handle: (ctx) => envelopeSerialized(ctx, regionsJson, CACHE.regions) } },
    {
      path: '/v1/latency/regions/:region/probe',
      GET: {
        limit: 'probe',
        // An unknown region is a bad parameter (400), refused before it costs the caller quota.
        accept: (ctx) => {
          const region = ctx.params.region ?? '';
          if (!isRegionId(region)) throw new Problem('unknown_region', `Region must be one of ${REGION_IDS.join(', ')}.`);
        },
        handle: probe,
      },
    },
  ];
}
