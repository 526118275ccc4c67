import type { Clock, Defer } from './ports/clock.js';

/** After this long past its due time a timer is taken as lost (an edge runtime ended its work). */
const LOST_AFTER_MS = 5_000;

/**
 * One pending piece of delayed work (a batch to a collector, a recovery probe) that works on
 * both runtimes. The wait and the work run as one promise handed to `defer`, so on Workers the
 * request that scheduled it keeps it alive (`waitUntil`, up to 30 s), and on Node the timer is
 * unref'd so pending work never holds a process open. Workers may still end the work early (a
 * long backoff past the 30 s), so an owner asks `lost()` on its next use and schedules again.
 */
export class DeferredTimer {
  #timer: ReturnType<typeof setTimeout> | undefined;
  #done: (() => void) | undefined;
  #dueAt = 0;

  constructor(
    private readonly defer: Defer,
    private readonly clock: Clock,
  ) {}

  /** Whether work is scheduled and not yet run. */
  get pending(): boolean {
    return this.#timer !== undefined;
  }

  /** Whether work is scheduled to run at or before `at` (a clock time), and has not run. */
  dueBy(at: number): boolean {
    return this.#timer !== undefined && this.#dueAt <= at;
  }

  /** Scheduled, but long past its time: the runtime dropped it. */
  lost(now = this.clock.now()): boolean {
    return this.#timer !== undefined && now > this.#dueAt + LOST_AFTER_MS;
  }

  /** Runs `work` after `ms`, replacing whatever was scheduled. */
  start(ms: number, work: () => Promise<void> | void): void {
    this.cancel();
    this.#dueAt = this.clock.now() + ms;
    const run = new Promise<void>((resolve) => {
      this.#done = resolve;
      this.#timer = setTimeout(() => {
        this.#timer = undefined;
        this.#done = undefined;
        Promise.resolve()
          .then(work)
          .catch(() => undefined)
          .finally(resolve);
      }, ms);
      (this.#timer as { unref?: () => void }).unref?.();
    });
    this.defer(run);
  }

  /** Drops the scheduled work, if any; its deferred promise settles at once. */
  cancel(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#done?.();
    this.#done = undefined;
  }
}
