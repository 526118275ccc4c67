import { DeferredTimer } from '../../core/deferred-timer.js';
import type { Clock, Defer } from '../../core/ports/clock.js';
import type { Logger } from '../../core/ports/logger.js';

interface CircuitOptions {
  /** Consecutive upstream failures that open the circuit. */
  threshold: number;
  /** First wait before a recovery probe; doubled after each failed probe up to `maxMs`. */
  baseMs: number;
  maxMs: number;
}

const CIRCUIT_DEFAULTS: CircuitOptions = { threshold: 5, baseMs: 1_000, maxMs: 30_000 };

/**
 * A circuit breaker for the one DNS upstream, in the manner of CoreDNS `forward` health checks
 * and dnsdist's backend states: when the upstream is down the circuit opens and lookups fail at
 * once with 503 instead of each waiting out the deadline against a dead peer. While open, a
 * background probe asks the upstream after a short wait that grows (1 s, 2 s, 4 s … 30 s, with
 * jitter); its first answer closes the circuit. Each transition is logged once, with the cause.
 *
 * What counts as the upstream being down is the resolver's to decide (createResolver): faults of
 * the transport count one by one (`failure`, opening after `threshold` in a row), while a lookup
 * that merely times out is only a reason to ask the health question, whose going unanswered
 * opens the circuit at once (`trip`). One name's slowness is that name's, and anyone can own a
 * zone whose servers never answer.
 */
export class Circuit {
  #failures = 0;
  #open = false;
  #openedAt = 0;
  #waitMs: number;
  readonly #timer: DeferredTimer;
  #lastReason = '';

  constructor(
    private readonly probe: () => Promise<void>,
    private readonly logger: Logger,
    defer: Defer,
    private readonly clock: Clock,
    private readonly options: CircuitOptions = CIRCUIT_DEFAULTS,
  ) {
    this.#waitMs = options.baseMs;
    this.#timer = new DeferredTimer(defer, clock);
  }

  get isOpen(): boolean {
    return this.#open;
  }

  /**
   * Whether a lookup may go upstream now. While open, a recovery probe the runtime dropped
   * (Workers end deferred work 30 s after a response) is scheduled again, so the circuit can
   * never stay open for want of a probe.
   */
  admits(): boolean {
    if (this.#open && this.#timer.lost()) this.#schedule();
    return !this.#open;
  }

  /** The upstream answered (whatever the answer said). */
  success(): void {
    this.#failures = 0;
    if (this.#open) this.#close();
  }

  /** The transport failed a lookup (refused, unreachable, reset, TLS); `reason` is the class of the fault. */
  failure(reason: string): void {
    if (this.#open) return;
    this.#failures += 1;
    this.#lastReason = reason;
    if (this.#failures === 1) this.logger.debug({ reason }, 'DNS upstream failed a lookup');
    if (this.#failures < this.options.threshold) return;
    this.#openNow({ reason, consecutive_failures: this.#failures });
  }

  /**
   * The health question (the recovery probe's own) went unanswered for a whole deadline while
   * no reply to any other question arrived either: the upstream is silent, so open at once.
   */
  trip(reason: string): void {
    if (this.#open) return;
    this.#lastReason = reason;
    this.#openNow({ reason, health_check: 'unanswered' });
  }

  #openNow(fields: Record<string, unknown>): void {
    this.#open = true;
    this.#openedAt = this.clock.now();
    this.#waitMs = this.options.baseMs;
    this.logger.warn(fields, 'DNS upstream failing: circuit open, lookups answer 503 at once until a probe gets an answer');
    this.#schedule();
  }

  /** Stops the recovery probe (shutdown). */
  stop(): void {
    this.#timer.cancel();
  }

  #schedule(): void {
    const wait = this.#waitMs / 2 + Math.random() * (this.#waitMs / 2);
    this.#timer.start(wait, () =>
      this.probe().then(
        () => {
          if (this.#open) this.#close();
        },
        (err: unknown) => {
          if (!this.#open) return;
          this.#lastReason = (err as { reason?: string }).reason ?? this.#lastReason;
          this.#waitMs = Math.min(this.#waitMs * 2, this.options.maxMs);
          this.#schedule();
        },
      ),
    );
  }

  #close(): void {
    this.stop();
    this.#open = false;
    this.#failures = 0;
    this.logger.info({ down_ms: this.clock.now() - this.#openedAt, last_reason: this.#lastReason }, 'DNS upstream answering again: circuit closed');
  }
}
