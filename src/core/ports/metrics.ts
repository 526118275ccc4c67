import type { Operation } from './limiter-store.js';

/**
 * Port: what the app reports for an operator's metrics. Labels are route patterns,
 * methods, statuses and operations only: never an address, a name asked about, a User-Agent or
 * a body (docs/api.md, "Privacy"). Node records them with prom-client; Workers leave them to the
 * platform's own analytics.
 */
export interface Metrics {
  /** False when nothing records: the core then takes no timings for it. */
  readonly enabled: boolean;
  /** One answered request: its route pattern (or `unmatched`), method, status and duration. */
  request(route: string, method: string, status: number, seconds: number): void;
  /** A request refused with 429 by an operation's limit. */
  rateLimited(operation: Operation): void;
}

export const NO_METRICS: Metrics = {
  enabled: false,
  request: () => undefined,
  rateLimited: () => undefined,
};

/** The methods a metric label may hold; anything else a client sends is counted as `other`. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);
export const methodLabel = (method: string): string => (METHODS.has(method) ? method : 'other');
