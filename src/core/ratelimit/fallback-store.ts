import { DeferredTimer } from '../deferred-timer.js';
import type { Clock, Defer } from '../ports/clock.js';
import type { LimiterStore, WindowHit, WindowVerdict } from '../ports/limiter-store.js';
import type { Logger } from '../ports/logger.js';
import { MemoryLimiterStore } from './memory-store.js';

/** A store shared between instances (Redis): it can fail or be slow. */
export interface SharedStore {
  hit(key: string, windowMs: number): Promise<WindowHit | WindowVerdict>;
  /** Resolves once the store answers again; used to notice recovery without risking a request. */
  ping(): Promise<void>;
  /** What to call it in logs. */
  readonly name: string;
}

interface FallbackOptions {
  /** Longest a request waits on the shared store before it is counted locally. */
  timeoutMs: number;
  /** How often a store that failed is tried again in the background. */
  retryMs: number;
  /** Keeps the recovery ping alive past a response (Workers' waitUntil). */
  defer?: Defer;
  /** Wall-clock time, to tell a recovery ping the runtime dropped. */
  clock: Clock;
}

function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      // Timers run before I/O in an event-loop turn: after a long pause (GC, a busy loop) the
      // reply may already be waiting. One more turn lets it win over a timeout it did not earn.
      setTimeout(() => {
        reject(Object.assign(new Error('timed out'), { code: 'timeout' }));
      }, 0);
    }, ms);
  });
  return Promise.race([promise, timeout]).finally(() => {
    clearTimeout(timer);
  });
}

/**
 * The shared store while it answers, the in-process counters while it does not (docs/api.md,
 * "Rate limits"): every call has a short deadline; a failure or timeout switches the instance
 * to its own counters at once (never a 500, never unlimited), logged once; a background ping
 * switches it back when the store answers again, logged once. Requests never wait on a store
 * known to be down.
 */
export class FallbackLimiterStore implements LimiterStore {
  #down = false;
  readonly #timer: DeferredTimer;

  constructor(
    private readonly shared: SharedStore,
    private readonly local: LimiterStore,
    private readonly logger: Logger,
    private readonly options: FallbackOptions,
  ) {
    this.#timer = new DeferredTimer(options.defer ?? (() => undefined), options.clock);
  }

  get degraded(): boolean {
    return this.#down;
  }

  hit(key: string, windowMs: number): WindowHit | WindowVerdict | Promise<WindowHit | WindowVerdict> {
    if (this.#down) {
      // A recovery ping the runtime dropped (Workers) is scheduled again by the next request.
      if (this.#timer.lost()) this.#retry();
      return this.local.hit(key, windowMs);
    }
    return within(this.shared.hit(key, windowMs), this.options.timeoutMs).catch((err: unknown) => {
      this.#fail(err);
      return this.local.hit(key, windowMs);
    });
  }

  /** Stops the background retry. */
  close(): void {
    this.#timer.cancel();
  }

  #fail(err: unknown): void {
    if (this.#down) return;
    this.#down = true;
    const code = (err as { code?: unknown }).code;
    this.logger.warn(
      { store: this.shared.name, reason: typeof code === 'string' ? code : 'error' },
      'shared rate-limit store unavailable: counting in this process until it returns',
    );
    this.#retry();
  }

  #retry(): void {
    this.#timer.start(this.options.retryMs, () =>
      within(this.shared.ping(), this.options.timeoutMs).then(
        () => {
          this.#down = false;
          this.logger.info({ store: this.shared.name }, 'shared rate-limit store available again');
        },
        () => {
          this.#retry();
        },
      ),
    );
  }
}

/**
 * A shared store with this process's (or isolate's) own counters behind it while it fails: how
 * both runtimes build one (Redis on Node, a Durable Object or a binding on
 * Workers), each with its own deadline.
 */
export function withLocalFallback(shared: SharedStore, logger: Logger, options: FallbackOptions): FallbackLimiterStore {
  return new FallbackLimiterStore(shared, new MemoryLimiterStore(options.clock), logger, options);
}
