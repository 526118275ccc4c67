import type { CachedResult, DnsCache } from './cache.js';
import { Coalescer } from '../../core/coalescer.js';
import { Circuit } from './circuit.js';
import { type DnsTransport, Deadline, DnsFailure } from '../../core/ports/dns-transport.js';
import type { DnsResult, DnsType } from '../../common/dns-types.js';
import { decodeResponse, encodeQuery, messageId } from './wire.js';
import type { Clock, Defer } from '../../core/ports/clock.js';
import type { Logger } from '../../core/ports/logger.js';

/** A result and the seconds a client may cache it (`Cache-Control: max-age`; 0 is `no-store`). */
export type Resolution = CachedResult;

/** Port: what routes need from DNS. */
export interface Resolver {
  /**
   * Through the shared TTL cache; concurrent identical misses share one upstream query. A hit
   * answers synchronously, so the cached path allocates no promise.
   */
  resolve(name: string, type: DnsType): Resolution | Promise<Resolution>;
  /**
   * Straight to the upstream, never cached: for lookups about one caller (the PTR of /v1/ip),
   * which must not sit in a shared cache (docs/api.md, "/v1/ip"). Identical questions asked while
   * one is in flight share its query (a page firing parallel requests from one address asks
   * once); nothing is kept once the answer arrives, and a later call always asks again.
   */
  resolveUncached(name: string, type: DnsType, timeoutMs: number): Promise<DnsResult>;
}

interface ResolverOptions {
  transport: DnsTransport;
  /** One deadline for the whole lookup, the TCP retry of a truncated reply included. */
  timeoutMs: number;
  cache: DnsCache;
  /** Wall-clock time, for the circuit's recovery timer and its log of how long it was open. */
  clock: Clock;
  /** Most lookups in flight upstream at once; past it a lookup fails at once (503), no socket opened. */
  maxOutstanding?: number;
  /**
   * Most uncached lookups (callers' PTRs) in flight at once, counted within `maxOutstanding` too;
   * past it one fails at once, no socket opened. Defaults to `ptrBudgetOf(maxOutstanding)`.
   */
  maxOutstandingUncached?: number;
  logger?: Logger;
  /**
   * Keeps work alive past the response that started it (Workers' waitUntil): the circuit's
   * recovery probe, and lookups other requests share (Coalescer).
   */
  defer?: Defer;
  /** Where cache and upstream outcomes are reported, for metrics. */
  observer?: ResolverObserver;
}

/**
 * What a lookup's status will be: the answer, or the failure class of docs/api.md, "DNS";
 * `ptr_budget` is a caller's PTR not asked because the callers' share was in flight.
 */
type UpstreamOutcome = 'answer' | 'bad_gateway' | 'unavailable' | 'timeout' | 'ptr_budget';

/**
 * The callers' PTRs' share of the lookups in flight: a quarter. Anyone can make /v1/ip ask a
 * reverse zone that never answers (an address whose zone is delegated nowhere, from many
 * sources each under its rate limit), and each such PTR holds a slot for the whole PTR deadline;
 * without a share of their own they filled the cap and /v1/dns/resolve answered 503 for others.
 * A quarter keeps three quarters for the DNS route, while a thousand slots (the
 * default) still let 250 PTRs wait out a 500 ms deadline at once: 500 dead-zone callers a second
 * before `reverse_hostname` turns null without asking.
 */
function ptrBudgetOf(maxOutstanding: number): number {
  return Math.max(1, Math.floor(maxOutstanding / 4));
}

/** Receives the resolver's outcomes (Node's metrics); nothing about the name asked. */
export interface ResolverObserver {
  cache(hit: boolean): void;
  /** One lookup's outcome; `seconds` when it went upstream, undefined when refused locally (circuit open, outstanding cap). */
  upstream(outcome: UpstreamOutcome, seconds: number | undefined): void;
}

const OUTCOMES: Record<DnsFailure['kind'], UpstreamOutcome> = { invalid: 'bad_gateway', too_large: 'bad_gateway', timeout: 'timeout', unavailable: 'unavailable' };

/** The resolver and what a runtime needs to watch and stop it. */
export interface ResolverRuntime extends Resolver {
  readonly cache: DnsCache;
  readonly circuit: Circuit;
  /** Stops background work (the circuit's recovery probe). */
  close(): Promise<void>;
}

/** A caller that joined a lookup in flight and outlived its own deadline waiting for it. */
const missedDeadline = () => new DnsFailure('timeout', 'deadline', 'deadline');

const SILENT: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/**
 * The upstream as the resolver talks to it: each exchange with its reply checked against the
 * question (and a truncated one retried on the fallback), when the upstream last answered
 * anything, and the circuit that its health question opens and closes.
 */
function upstreamOf(transport: DnsTransport, timeoutMs: number, logger: Logger, defer: NonNullable<ResolverOptions['defer']>, clock: Clock) {
  /** A reply checked against its query: the same ID, then decoded and matched to the question. */
  function checked(reply: Uint8Array, query: Uint8Array, name: string, type: DnsType) {
    if (messageId(reply) !== messageId(query)) throw new DnsFailure('invalid', 'its ID does not match the query');
    return decodeResponse(reply, name, type);
  }

  /** When the upstream last sent any reply (performance.now()), to any question. */
  let lastReplyAt = -Infinity;

  /**
   * The health question, asked by the recovery probe and after a lookup times out: the root's
   * NS, which any recursive resolver answers from memory.
   */
  const probe = async () => {
    const query = encodeQuery('', 'NS');
    const deadline = new Deadline(timeoutMs);
    const reply = await transport.exchange(query, deadline).finally(() => {
      deadline.clear();
    });
    lastReplyAt = performance.now();
    // Any message with our ID is an answer: the upstream is there (even REFUSED says so).
    if (messageId(reply) !== messageId(query)) throw new DnsFailure('invalid', 'probe reply with another ID', 'mismatched_id');
  };
  const circuit = new Circuit(probe, logger, defer, clock);

  /** The health question in flight after a timeout, if any: one at a time. */
  let checking: Promise<void> | undefined;

  /**
   * A lookup sent at `sentAt` timed out. That alone says nothing about the upstream: the name's
   * own servers may never answer (a zone anyone can set up), and counting it would let any caller
   * open the circuit for everyone. So a timeout is only a reason to look: when no reply to any
   * question has arrived since the lookup was sent, the health question is asked (one at a time),
   * and only its going unanswered for a whole deadline, with nothing else answered meanwhile,
   * opens the circuit. Faults of the transport itself (refused, unreachable, reset, TLS) still
   * count one by one in the circuit.
   */
  function afterTimeout(sentAt: number): void {
    if (lastReplyAt >= sentAt || checking !== undefined || circuit.isOpen) return;
    const asked = performance.now();
    checking = probe()
      .then(
        () => {
          circuit.success();
        },
        (err: unknown) => {
          if (lastReplyAt >= asked) return; // lost, but the upstream answered others meanwhile
          const failure = err instanceof DnsFailure ? err : undefined;
          if (failure?.kind === 'invalid' || failure?.kind === 'too_large') circuit.success();
          else circuit.trip(failure?.reason ?? 'health_check');
        },
      )
      .finally(() => {
        checking = undefined;
      });
    defer(checking);
  }

  /** One async step for the common reply: a truncated one (rare) goes on to the fallback. */
  async function exchange(name: string, type: DnsType, deadline: Deadline): Promise<DnsResult> {
    const query = encodeQuery(name, type);
    const reply = await transport.exchange(query, deadline);
    lastReplyAt = performance.now();
    const decoded = checked(reply, query, name, type);
    if (!decoded.truncated) return decoded.result;
    const fallback = transport.truncationFallback;
    if (fallback === undefined) throw new DnsFailure('invalid', 'it is truncated on a stream transport');
    const again = checked(await fallback.exchange(query, deadline), query, name, type);
    if (again.truncated) throw new DnsFailure('invalid', 'it is truncated on a stream transport');
    return again.result;
  }

  return { circuit, exchange, afterTimeout };
}

/** Why a lookup is refused before it is sent (its circuit open, too many in flight), if it is. */
function refusalOf(circuit: Circuit, outstanding: number, maxOutstanding: number): DnsFailure | undefined {
  if (!circuit.admits()) return new DnsFailure('unavailable', 'it has been failing, and is being probed for recovery', 'circuit_open');
  if (outstanding >= maxOutstanding) return new DnsFailure('unavailable', 'too many lookups are in flight', 'outstanding_cap');
  return undefined;
}

/**
 * A failed lookup told to the observer and the circuit. Only the transport's own faults count; a
 * reply the upstream sent (even a bad one) proves it is there, and a timeout is the name's until
 * the health question says otherwise (afterTimeout).
 */
function countFailure(err: unknown, started: number, circuit: Circuit, afterTimeout: (sentAt: number) => void, observer: ResolverObserver | undefined): void {
  if (!(err instanceof DnsFailure)) return;
  observer?.upstream(OUTCOMES[err.kind], (performance.now() - started) / 1000);
  if (err.kind === 'unavailable') circuit.failure(err.reason);
  else if (err.kind === 'timeout') afterTimeout(started);
  else circuit.success();
}

export function createResolver({ transport, timeoutMs, cache, clock, maxOutstanding = Infinity, maxOutstandingUncached = ptrBudgetOf(maxOutstanding), logger = SILENT, defer = () => undefined, observer }: ResolverOptions): ResolverRuntime {
  const inflight = new Coalescer<DnsResult>(defer);
  // Apart from `inflight`, so an uncached lookup never hands its answer to the cache's waiters.
  const inflightUncached = new Coalescer<DnsResult>(defer);
  let outstanding = 0;
  let outstandingUncached = 0;

  const { circuit, exchange, afterTimeout } = upstreamOf(transport, timeoutMs, logger, defer, clock);

  async function lookup(name: string, type: DnsType, deadlineMs: number): Promise<DnsResult> {
    const refusal = refusalOf(circuit, outstanding, maxOutstanding);
    if (refusal !== undefined) {
      observer?.upstream('unavailable', undefined);
      throw refusal;
    }
    outstanding += 1;
    const started = performance.now();
    // A timer cleared when the lookup ends (AbortSignal.timeout would leave every one running
    // until it fires), with no AbortController unless the transport needs one (deadline.ts).
    const deadline = new Deadline(deadlineMs);
    try {
      const result = await exchange(name, type, deadline);
      circuit.success();
      observer?.upstream('answer', (performance.now() - started) / 1000);
      return result;
    } catch (err) {
      countFailure(err, started, circuit, afterTimeout, observer);
      throw err;
    } finally {
      outstanding -= 1;
      deadline.clear();
    }
  }

  return {
    cache,
    circuit,
    close() {
      circuit.stop();
      return Promise.resolve();
    },
    resolve(name, type) {
      const key = `${type} ${name}`;
      const cached = cache.get(key);
      observer?.cache(cached !== undefined);
      if (cached !== undefined) return cached;
      const pending = inflight.run(
        key,
        () =>
          lookup(name, type, timeoutMs).then((result) => {
            cache.set(key, result);
            return result;
          }),
        timeoutMs,
        missedDeadline,
      );
      return pending.then((result) => ({ result, maxAge: result.cacheTtl }));
    },
    resolveUncached(name, type, deadlineMs) {
      // Keyed by the deadline too: a caller with a shorter one must not wait on a longer one.
      const key = `${type} ${name} ${deadlineMs}`;
      const deadline = Math.min(deadlineMs, timeoutMs);
      const pending = inflightUncached.run(
        key,
        () => {
          if (outstandingUncached >= maxOutstandingUncached) {
            observer?.upstream('ptr_budget', undefined);
            return Promise.reject(new DnsFailure('unavailable', 'too many callers\' lookups are in flight', 'ptr_budget'));
          }
          outstandingUncached += 1;
          return lookup(name, type, deadline).finally(() => {
            outstandingUncached -= 1;
          });
        },
        deadline,
        missedDeadline,
      );
      return pending;
    },
  };
}
