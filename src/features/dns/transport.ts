import type { Deadline } from './deadline.js';

/**
 * Port: sends one DNS message to the fixed upstream and returns its reply. A transport owns
 * framing and matching replies to the query (a UDP transport ignores replies with another ID,
 * RFC 5452 §9.1); the resolver owns validation, bounds and the deadline.
 */
export interface DnsTransport {
  /** Rejects with a DnsFailure: 'timeout' when `deadline` passes, 'unavailable' when unreachable. */
  exchange(query: Uint8Array, deadline: Deadline): Promise<Uint8Array>;
  /** Where a truncated reply is asked again (UDP → TCP to the same resolver, RFC 7766 §5). */
  readonly truncationFallback?: DnsTransport;
}

/** The protocol's own ceiling on a message (RFC 1035 §4.2.2 length prefix). */
export const MAX_MESSAGE_BYTES = 65_535;
