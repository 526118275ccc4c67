import type { RateLimitCounter } from '../ports/limiter-store/durable-object.js';
import type { RegionProbe } from '../ports/probe-durable-object.js';

/**
 * The Worker's bindings and vars (wrangler.jsonc). Vars carry the same names as Node's
 * environment where they apply; bindings are what only the platform provides. Every binding is
 * optional here because a deployment uses only the ones its vars name, and the configuration
 * says clearly which one is missing (config.ts).
 */
export interface WorkerEnv {
  [name: string]: unknown;
  /** Regional latency probes, one object per region placed by location hint. */
  REGION_PROBE?: DurableObjectNamespace<RegionProbe>;
  /** Exact, global fixed-window counters, one object per (operation, keyed hash of the source). */
  RATE_LIMITER?: DurableObjectNamespace<RateLimitCounter>;
  /** The platform's rate-limiting bindings, one per operation (approximate, per location). */
  IP_RATE_LIMIT?: RateLimit;
  DNS_RATE_LIMIT?: RateLimit;
  PROBE_RATE_LIMIT?: RateLimit;
  EVENTS_RATE_LIMIT?: RateLimit;
  SPEEDTEST_RATE_LIMIT?: RateLimit;
  RPM_RATE_LIMIT?: RateLimit;
  TURN_RATE_LIMIT?: RateLimit;
  /** Workers Analytics Engine dataset for accepted events. */
  ANALYTICS?: AnalyticsEngineDataset;
}

/** Only the string-valued vars: what the shared configuration readers take. */
export function varsOf(env: WorkerEnv): Record<string, string | undefined> {
  const vars: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(env)) if (typeof value === 'string') vars[name] = value;
  return vars;
}
