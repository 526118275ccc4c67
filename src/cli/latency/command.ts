// `netdiag latency`: the round trips from here to the API and from the API's edge to each region (/v1/latency/regions).
import type { Schemas } from '../../generated/openapi-types.js';
import { ApiFailure, type Client } from '../api/client.js';
import { MAX_API_BODY_BYTES, discardBounded } from '../api/bounded-body.js';
import { print, printJson, table, type Output } from '../terminal/output.js';

/** This client's own round trip to the API: median time to the response headers of a few health requests on a warm connection. */
async function clientRtt(client: Client): Promise<number> {
  await client.get('/v1/health');
  const samples: number[] = [];
  for (let i = 0; i < 5; i++) {
    const started = performance.now();
    // client.get above refused a redirect away; a timing request follows none at all. Sent as the
    // client sends (client.send): from its source address, over its family, on its warm connection.
    const res = await client.send(`${client.base}/v1/health`, { redirect: 'error', signal: AbortSignal.timeout(client.timeoutMs) });
    samples.push(performance.now() - started);
    await discardBounded(res, MAX_API_BODY_BYTES);
  }
  samples.sort((a, b) => a - b);
  return samples[2] ?? 0;
}

/**
 * `netdiag latency`: this client's own round trip to the API and, for each region available (or the
 * one named), the deployment's round trip to it; an unknown region is refused as the API names it.
 */
export async function latencyCommand(client: Client, out: Output, region: string | undefined): Promise<void> {
  const { regions } = await client.get<Schemas['RegionsResponse']['data']>('/v1/latency/regions');
  const chosen = region === undefined ? regions.filter((r) => r.available) : regions.filter((r) => r.id === region);
  if (region !== undefined && chosen.length === 0) {
    // The API says which ids exist: let it name them.
    await client.get(`/v1/latency/regions/${encodeURIComponent(region)}/probe`).catch((err: unknown) => {
      throw err instanceof ApiFailure ? new ApiFailure(`region "${region}": ${err.message}`) : err;
    });
  }
  const client_rtt = await clientRtt(client);
  const rows = [];
  for (const r of chosen) {
    const probe = await client.get<Schemas['LatencyProbeData']>(`/v1/latency/regions/${r.id}/probe`);
    rows.push({ region: r.id, name: r.name, edge_to_region_rtt_ms: probe.edge_to_region_rtt_ms, client_to_api_rtt_ms: Math.round(client_rtt * 1000) / 1000 });
  }
  if (out.json) {
    // The client's own round trip at the top too: it is measured when no region is available.
    printJson({ client_to_api_rtt_ms: Math.round(client_rtt * 1000) / 1000, regions: rows });
    return;
  }
  if (rows.length === 0) {
    print('This deployment has no regional probes configured.');
    return;
  }
  print(
    table(out, [
      ['REGION', 'NAME', 'YOU → API', 'API → REGION', 'TOTAL'],
      ...rows.map((r) => [r.region, r.name, `${r.client_to_api_rtt_ms.toFixed(1)} ms`, `${r.edge_to_region_rtt_ms.toFixed(1)} ms`, `${(r.client_to_api_rtt_ms + r.edge_to_region_rtt_ms).toFixed(1)} ms`]),
    ]),
  );
}
