// The latency check: `netdiag latency [REGION] --json`, read down to two round trips: this machine
// to the server, and the server to the region named or the worst of all available.
import { isRegionId, REGION_IDS } from '../../../common/regions.js';
import { finiteOrNull, numberFigure, objectOf, type CheckKind } from './check-kind.js';

export interface LatencySettings {
  /** The region asked for; all available ones when none. */
  region?: string;
}

export const latencyCheck: CheckKind<LatencySettings> = {
  keys: ['region'],
  settings: (read) => {
    if (!read.has('region')) return {};
    const region = read.text('region');
    // The seven region ids are the contract's (src/common/regions.ts); which have a probe is the deployment's.
    if (!isRegionId(region)) read.fail('region', `"${region}" is not a region id (${REGION_IDS.join(', ')})`);
    return { region };
  },
  args: ({ region }, server) => ['latency', ...(region === undefined ? [] : [region]), '--json', '--url', server],
  figures: [numberFigure('client_to_api_rtt_ms', 'ms'), numberFigure('edge_to_region_rtt_ms', 'ms')],
  figuresOf: (json) => {
    const regions = Array.isArray(json.regions) ? json.regions.map(objectOf) : [];
    const edge = regions.map((r) => finiteOrNull(r.edge_to_region_rtt_ms)).filter((v) => v !== null);
    // The client's own round trip (at the top, and in every row); the regions' worst is the one to watch.
    return { client_to_api_rtt_ms: finiteOrNull(json.client_to_api_rtt_ms ?? regions[0]?.client_to_api_rtt_ms), edge_to_region_rtt_ms: edge.length === 0 ? null : Math.max(...edge) };
  },
};
