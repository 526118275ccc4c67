import type { Defer } from './ports/clock.js';

interface Waiter<T> {
  settle(outcome: { ok: true; value: T } | { ok: false; err: Error }): void;
}

/**
 * Identical work asked for while it is in flight is done once (docs/api.md, "DNS": "identical
 * concurrent misses share one upstream query"). The first caller's promise is the work itself;
 * every later caller gets a promise of its own, made in its own request, which the work settles.
 *
 * Why not one shared promise: on Workers a promise belongs to the request that made it, and a
 * request with nothing of its own pending is judged hung and cancelled ("The Workers runtime
 * canceled this request because it detected that your Worker's code had hung"), even while
 * another request's I/O is about to answer it, as the Workers benchmark's coalesced /v1/ip
 * requests were. So each waiter holds a timer of its own for as long as it may wait (its
 * deadline, after which it fails with `late()`), which is both its deadline and the pending
 * event that keeps it alive. The work is also handed to `defer`, so it survives the first
 * caller's client going away while others still wait.
 */
export class Coalescer<T> {
  readonly #pending = new Map<string, Waiter<T>[]>();

  constructor(private readonly defer: Defer = () => undefined) {}

  /** Work in flight now (for tests and metrics). */
  get size(): number {
    return this.#pending.size;
  }

  /**
   * `work` is started unless the same `key` is in flight; a caller that joins waits at most
   * `waitMs` and then fails with what `late` returns.
   */
  run(key: string, work: () => Promise<T>, waitMs: number, late: () => Error): Promise<T> {
    const waiters = this.#pending.get(key);
    if (waiters !== undefined) {
      return new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(waiter), 1);
          reject(late());
        }, waitMs);
        const waiter: Waiter<T> = {
          settle(outcome) {
            clearTimeout(timer);
            if (outcome.ok) resolve(outcome.value);
            else reject(outcome.err);
          },
        };
        waiters.push(waiter);
      });
    }
    const mine: Waiter<T>[] = [];
    this.#pending.set(key, mine);
    const done = work().then(
      (value) => {
        this.#pending.delete(key);
        for (const waiter of mine) waiter.settle({ ok: true, value });
        return value;
      },
      (err: unknown) => {
        this.#pending.delete(key);
        // The work's own failure, passed on as it is (the work rejects only with Errors).
        for (const waiter of mine) waiter.settle({ ok: false, err: err as Error });
        throw err;
      },
    );
    this.defer(done.catch(() => undefined));
    return done;
  }
}
