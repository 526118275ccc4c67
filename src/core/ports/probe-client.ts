import type { RegionId } from '../../common/regions.js';

/** A URL probe's measurement request (`netdiag probe`): one GET of this path, answered 204. */
export const PROBE_PATH = '/rtt';

/** A probe that is not configured, not reachable, or did not answer in time (503 probe_unavailable). */
export class ProbeUnavailable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProbeUnavailable';
  }
}

/**
 * Port: the edge's view of its regional probes (the API contract, docs/api.md, "Latency probes").
 * A runtime keeps a connection open to each probe, so `measure` is exactly one request and
 * response over it, timed with a monotonic clock; connection set-up is never in the figure.
 */
export interface LatencyProbes {
  /** Regions with a probe configured in this deployment: `available` is true exactly for these. */
  readonly regions: ReadonlySet<RegionId>;
  /** One edge-to-probe round trip in milliseconds; rejects with ProbeUnavailable. */
  measure(region: RegionId): Promise<number>;
}

/** A deployment without probes: every region unavailable. */
export const NO_PROBES: LatencyProbes = {
  regions: new Set(),
  measure: (region) => Promise.reject(new ProbeUnavailable(`No probe is configured for region ${region}.`)),
};
