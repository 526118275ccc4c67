import type { CallerResult } from '../ip/caller-address.js';

/** Per-request state, set once by the first middleware and read by the rest. */
export interface RequestState {
  requestId: string;
  /** Milliseconds since the epoch when the request was received. */
  receivedAt: number;
  /** RateLimit-* headers for limited routes, set by the rate-limit middleware. */
  rateHeaders: Record<string, string> | undefined;
  /** The caller address, resolved at most once per request. */
  caller: CallerResult | undefined;
}

export interface AppEnv {
  Variables: { state: RequestState };
}
