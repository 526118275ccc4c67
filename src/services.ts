import type { LimiterStore } from './ratelimit/store.js';
import type { Limits } from './ratelimit/limits.js';
import type { TrustPolicy } from './net/trust.js';
import type { TrustedHeader } from './net/caller-address.js';
import type { EventSink } from './events/sink.js';
import type { LatencyProbes } from './latency/probes.js';
import type { Resolver } from './dns/resolver.js';
import type { Metrics } from './metrics/port.js';
import type { AsnLookup, CityLookup } from './net/geo.js';
import type { Clock, Defer, Logger } from './ports.js';

/** Everything the core needs from the outside world, passed in by a runtime. */
export interface Services {
  clock: Clock;
  /** A fresh random UUID (RFC 9562 v4). */
  newId(): string;
  /**
   * A keyed one-way hash: used wherever state must be per caller (rate-limit keys), so no
   * caller address is ever kept in plain text (SPEC-NOTES, Privacy). Synchronous where the
   * runtime has a synchronous HMAC (Node), a promise where only WebCrypto exists (Workers).
   */
  keyedHash(input: string): string | Promise<string>;
  /** Keeps deferred work alive past the response (see `Defer`). */
  defer: Defer;
  trust: TrustPolicy;
  /** The one forwarding header trusted proxies write (`NETDIAG_TRUST_PROXY_HEADER`). */
  trustHeader: TrustedHeader;
  limiter: LimiterStore;
  /** DNS through the one fixed upstream (SPEC-NOTES, DNS). */
  dns: Resolver;
  limits: Limits;
  /** Approximate location and network of public addresses. */
  geo: { city: CityLookup; asn: AsnLookup };
  /** This node's location code (`NETDIAG_COLO`), or null; an edge runtime's own `edge.colo` wins. */
  colo: string | null;
  /** Where accepted analytics events go (`NETDIAG_EVENTS_SINK`). */
  events: EventSink;
  /** The regional latency probes this deployment keeps warm connections to. */
  probes: LatencyProbes;
  /** Base for problem `type` URIs; the request's origin when undefined. */
  publicUrl: string | undefined;
  /** The OpenAPI document served at /v1/openapi.json. */
  openapi: unknown;
  logger: Logger;
  /** Log one line per request (at info). Off by default: the cheapest privacy is not writing. */
  accessLog: boolean;
  /** Whether /__down and /__up serve (`NETDIAG_SPEEDTEST_TARGETS`). */
  speedTestTargets: boolean;
  /** Where request counts and durations and 429s go (`NETDIAG_METRICS_PORT`); NO_METRICS when off. */
  metrics: Metrics;
}
