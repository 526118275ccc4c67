import type { LimiterStore } from './ratelimit/store.js';
import type { Limits } from './ratelimit/limits.js';
import type { TrustPolicy } from './ip/trust.js';
import type { TrustedHeader } from './ip/caller-address.js';
import type { EventSink } from './events/sink.js';
import type { LatencyProbes } from './latency/probes.js';
import type { Resolver } from './dns/resolver.js';
import type { Metrics } from './metrics/port.js';
import type { AsnLookup, CityLookup, LocationInformation, NetworkInformation } from './ip/geo.js';

/** What the runtime observed about the connection a request came in on. */
export interface ConnectionFacts {
  /**
   * The TCP peer address, as the socket reports it; undefined if the runtime cannot tell. On a
   * connection that came through PROXY protocol, the client its header named (see `proxied`).
   */
  peerAddress: string | undefined;
  /**
   * Set when a trusted proxy introduced this connection with a PROXY protocol header (Node with
   * `NETDIAG_PROXY_PROTOCOL=on`). `peerAddress` is then the client that header named, undefined
   * when it named none (v1 `UNKNOWN`, v2 `LOCAL` or the unspecified family): such a connection
   * has no caller. No forwarding header is ever read on it, since behind an L4 proxy only the
   * client writes them. `proxyAddress` is the proxy's own address (the socket's peer).
   */
  proxied?: { proxyAddress: string | undefined };
  /** `HTTP/1.0`, `HTTP/1.1`, `HTTP/2` or `HTTP/3`, or null when not observed. */
  httpProtocol: string | null;
  /** The negotiated TLS version (`TLSv1.3`), or null when this server did not terminate TLS. */
  tlsVersion: string | null;
  /**
   * What an edge runtime observed about the caller itself (Workers' `request.cf`): where it came
   * in, where it is and its network. Undefined where the service looks these up in its own data
   * (Node), so a runtime with the platform's view never second-guesses it with ours.
   */
  edge?: EdgeFacts;
}

/** The platform's own view of a connection (spec §1 rule 4: trusted in a verified edge runtime). */
export interface EdgeFacts {
  /** The edge location code (`provider_colo`), or null when absent or malformed. */
  colo: string | null;
  /** Country as ISO 3166-1 alpha-2; the name is filled in by the core. */
  location: Omit<LocationInformation, 'country'>;
  network: NetworkInformation;
}

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
