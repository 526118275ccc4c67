import type { TransferLimits } from '../core/http/transfers.js';
import type { PrecompressedAsset, TextCompressor } from '../core/http/static-asset.js';
import type { LimiterStore } from '../core/ports/limiter-store.js';
import type { Limits } from '../core/ratelimit/limits.js';
import type { TrustPolicy } from '../core/net/trust.js';
import type { TrustedHeader } from '../core/net/caller-address.js';
import type { EventSink } from '../core/ports/event-sink.js';
import type { LatencyProbes } from '../core/ports/probe-client.js';
import type { Resolver } from '../engines/dns/resolver.js';
import type { Metrics } from '../core/ports/metrics.js';
import type { AsnLookup, CityLookup } from '../core/ports/geo-lookup.js';
import type { Clock, Defer } from '../core/ports/clock.js';
import type { ListedServer } from '../common/servers.js';
import type { TurnOptions } from '../features/speedtest/turn.js';
import type { ClientPackage } from '../features/client-package.js';
import type { Logger } from '../core/ports/logger.js';
import type { PortCheck } from '../core/ports/port-check.js';

/**
 * What a runtime provides: time, identity, hashing, logging and every piece of I/O. Node builds
 * these from sockets, files and Redis; Workers from bindings and WebCrypto; tests from memory.
 */
export interface RuntimePorts {
  clock: Clock;
  /** A fresh random UUID (RFC 9562 v4). */
  newId: () => string;
  /**
   * A keyed one-way hash: used wherever state must be per caller (rate-limit keys, the caller id
   * in TURN usernames), so no caller address is ever kept or handed out in plain text
   * (docs/api.md, Privacy). Synchronous where the
   * runtime has a synchronous HMAC (Node), a promise where only WebCrypto exists (Workers).
   */
  keyedHash: (input: string) => string | Promise<string>;
  /** Keeps deferred work alive past the response (see `Defer`). */
  defer: Defer;
  logger: Logger;
  limiter: LimiterStore;
  /** DNS through the one fixed upstream. */
  dns: Resolver;
  /**
   * Approximate location and network of public addresses, and the credit their data's licence
   * asks for wherever it is shown (the embedded DB-IP data is CC BY 4.0): the page's footer.
   */
  geo: {
    city: CityLookup;
    asn: AsnLookup;
    credits?: readonly string[];
    /**
     * False where the lookups answer nothing of their own (Workers: the edge observes the caller's
     * connection, and there are no tables to look another address up in): `?ip=` is then refused
     * rather than answered with nothing. True when left out.
     */
    anyAddress?: boolean;
  };
  /**
   * The port check (`/port/N`): a TCP connection to the caller's own address, or why this server
   * does not make one (turned off, or a runtime that does not connect to callers). Off when left out.
   */
  portCheck?: PortCheck;
  /**
   * The packed command-line client served at /client/netdiag-client.tgz, when the build left one
   * (Node's dist/client/); none where the runtime has no files (Workers).
   */
  clientPackage?: ClientPackage;
  /** Where accepted analytics events go. */
  events: EventSink;
  /** The regional latency probes this deployment keeps warm connections to. */
  probes: LatencyProbes;
  /** Where request counts and durations and 429s go; NO_METRICS when off. */
  metrics: Metrics;
  /** The OpenAPI document served at /v1/openapi.json: its text and compressed forms (made at build). */
  openapi: PrecompressedAsset;
  /**
   * Compresses a text answer made per request (the page's HTML); undefined where the platform
   * compresses answers itself (Workers).
   */
  compress?: TextCompressor;
}


/** What an operator sets: plain values from the runtime's configuration table, no behaviour. */
export interface OperatorOptions {
  /** The proxies whose forwarding header is believed (`NETDIAG_TRUST_PROXY`). */
  trust: TrustPolicy;
  /** The one forwarding header trusted proxies write (`NETDIAG_TRUST_PROXY_HEADER`). */
  trustHeader: TrustedHeader;
  /** Requests per source per minute, by operation (`NETDIAG_RATE_LIMITS`). */
  limits: Limits;
  /** This node's location code (`NETDIAG_COLO`), or null; an edge runtime's own `edge.colo` wins. */
  colo: string | null;
  /**
   * Whether `?ip=` and `/v1/dns/resolve` ask the resolver about a special-use address's reverse
   * zone (`NETDIAG_IP_PARAM_SPECIAL_PTR`): off unless set, so nobody can read the operator's
   * private reverse zones through either. The caller's own PTR is asked either way. False when left out.
   */
  specialUsePtr?: boolean;
  /** Base for problem `type` URIs; the request's origin when undefined (`NETDIAG_PUBLIC_URL`). */
  publicUrl: string | undefined;
  /** Log one line per request (at info). Off by default: the cheapest privacy is not writing. */
  accessLog: boolean;
  /** Whether /__down and /__up serve (`NETDIAG_SPEEDTEST_TARGETS`). */
  speedTestTargets: boolean;
  /**
   * What one source may hold of the speed-test and responsiveness transfers (`NETDIAG_TRANSFERS_AT_ONCE`,
   * `NETDIAG_TRANSFER_BYTES_PER_MINUTE`); DEFAULT_TRANSFER_LIMITS when left out.
   */
  transfers?: TransferLimits;
  /** The TURN server credentials are minted for (`NETDIAG_TURN_URL`, `NETDIAG_TURN_SECRET`), if any. */
  turn: TurnOptions | undefined;
  /** Origins of this deployment that answer over one address family each, or null (`NETDIAG_IPV4_URL`, `NETDIAG_IPV6_URL`). */
  families: { ipv4: string | null; ipv6: string | null };
  /** The operator's deployments (`NETDIAG_SERVERS`), served at /v1/servers and allowed by the page's policy; none when left out. */
  servers?: readonly ListedServer[];
}

/** The options each runtime reads alike from its configuration table (the rows of src/core/config/vars.ts). */
type CommonOptions = Pick<OperatorOptions, 'limits' | 'publicUrl' | 'accessLog' | 'speedTestTargets' | 'turn' | 'families' | 'servers'>;
/** What a runtime settles its own way: how it finds the caller, and whether it names its location. */
type EdgeOptions = Pick<OperatorOptions, 'trust' | 'trustHeader' | 'colo' | 'specialUsePtr'>;

/** OperatorOptions from a runtime's validated configuration: the one builder both runtimes use. */
export function operatorOptions(config: CommonOptions, edge: EdgeOptions): OperatorOptions {
  return {
    ...edge,
    limits: config.limits,
    publicUrl: config.publicUrl,
    accessLog: config.accessLog,
    speedTestTargets: config.speedTestTargets,
    turn: config.turn,
    families: config.families,
    servers: config.servers,
  };
}

/** Everything the app is built from, passed in by a runtime: kept as two halves so neither hides in the other. */
export interface Services {
  ports: RuntimePorts;
  options: OperatorOptions;
}
