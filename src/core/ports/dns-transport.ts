// The DNS transport port: what a transport is given (a query and its deadline), what it answers
// (the reply), and what it rejects with (DnsFailure). Its conformance suite is
// dns-transport.conformance.ts beside it; every transport runs it.

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

/**
 * Why a lookup failed. Each kind maps to one status (docs/api.md, "DNS"): an invalid or oversized
 * upstream message 502, a missed deadline 504, an upstream that cannot be reached 503.
 */
type DnsFailureKind = 'invalid' | 'too_large' | 'timeout' | 'unavailable';

export class DnsFailure extends Error {
  /**
   * The class of the fault for the operator's log (`ECONNREFUSED`, `status_503`, `deadline`,
   * a TLS error code), never shown to a client.
   */
  readonly reason: string;

  constructor(
    readonly kind: DnsFailureKind,
    message: string,
    reason?: string,
  ) {
    super(message);
    this.name = 'DnsFailure';
    this.reason = reason ?? kind;
  }
}

/**
 * A lookup's deadline: one timer, cleared when the lookup ends, and the few listeners that end
 * an exchange when it fires. It stands where an AbortSignal would: Node builds an EventTarget for
 * every AbortController, a share of /v1/ip's CPU for a new caller that shows in a profile
 * (docs/benchmarks.md, "Per-operation costs"), and only DNS over HTTPS needs a real signal (fetch
 * takes one), so that is made on demand.
 */
export class Deadline {
  #expired = false;
  #listeners: (() => void)[] = [];
  #controller: AbortController | undefined;
  readonly #timer: ReturnType<typeof setTimeout>;

  constructor(ms: number) {
    this.#timer = setTimeout(() => {
      this.#expire();
    }, ms);
  }

  get expired(): boolean {
    return this.#expired;
  }

  /** Calls `listener` once when the deadline passes; the function returned forgets it. */
  onExpire(listener: () => void): () => void {
    this.#listeners.push(listener);
    return () => {
      const at = this.#listeners.indexOf(listener);
      if (at >= 0) this.#listeners.splice(at, 1);
    };
  }

  /** An AbortSignal that aborts with the deadline, for APIs that take one (fetch). */
  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#expired) this.#controller.abort();
    }
    return this.#controller.signal;
  }

  /** Ends the timer: the lookup is over, whatever ended it. */
  clear(): void {
    clearTimeout(this.#timer);
  }

  #expire(): void {
    this.#expired = true;
    this.#controller?.abort();
    const listeners = this.#listeners;
    this.#listeners = [];
    for (const listener of listeners) listener();
  }
}
