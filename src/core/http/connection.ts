// What a runtime observed about the connection a request came in on: the one thing the core
// takes from the transport, apart from the request itself.
import type { LocationInformation, NetworkInformation } from '../ports/geo-lookup.js';

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

/** The platform's own view of a connection (the API contract: trusted in a verified edge runtime). */
export interface EdgeFacts {
  /** The edge location code (`provider_colo`), or null when absent or malformed. */
  colo: string | null;
  /** Country as ISO 3166-1 alpha-2; the name is filled in by the ip feature. */
  location: Omit<LocationInformation, 'country'>;
  network: NetworkInformation;
}
