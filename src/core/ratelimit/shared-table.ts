/**
 * The memory of a limiter table that several threads count in (NETDIAG_WORKERS > 1 on Node: one
 * process, worker threads on one port). One SharedArrayBuffer holds, in order: the lock (the
 * holder's id and the number of waiters, two Int32), the table's bookkeeping (four Float64: live
 * windows, epoch, next sweep, last full sweep) and the four slot arrays of `MemoryLimiterStore`
 * (a fingerprint's two halves, a count, a window's end: Uint32 each). A shared table never
 * resizes: it is made at its largest, so no thread ever holds a view of a table another replaced.
 */
const LOCK_WORDS = 2;
const META_FIELDS = 4;
const HEADER_BYTES = LOCK_WORDS * 4 + META_FIELDS * 8;
const SLOT_BYTES = 16;

interface TableViews {
  lock: Int32Array;
  meta: Float64Array;
  hi: Uint32Array;
  lo: Uint32Array;
  count: Uint32Array;
  resetAt: Uint32Array;
}

/** A zeroed table of `capacity` slots (a power of two): zero slots are empty, zero bookkeeping is "not begun". */
export function createSharedTable(capacity: number): SharedArrayBuffer {
  return new SharedArrayBuffer(HEADER_BYTES + capacity * SLOT_BYTES);
}

/** Views over a shared table's parts, for any thread that was handed its buffer. */
export function tableViews(buffer: SharedArrayBuffer): TableViews {
  const capacity = (buffer.byteLength - HEADER_BYTES) / SLOT_BYTES;
  const slots = (i: number) => new Uint32Array(buffer, HEADER_BYTES + i * capacity * 4, capacity);
  return {
    lock: new Int32Array(buffer, 0, LOCK_WORDS),
    meta: new Float64Array(buffer, LOCK_WORDS * 4, META_FIELDS),
    hi: slots(0),
    lo: slots(1),
    count: slots(2),
    resetAt: slots(3),
  };
}

/**
 * A wait is bounded, so a holder that died with the lock (a thread terminated mid-hit) costs the
 * others this long at most before the primary, told of the death, frees it (`freeLockOf`).
 */
const WAIT_MS = 20;
/** Tries before sleeping: the lock is held for one hit (well under a microsecond) or a sweep. */
const SPINS = 64;
/**
 * The longest a hit waits for the lock before it fails: a hit holds it under a microsecond and a
 * sweep of the largest table 5 ms, and a dead holder's lock is freed as soon as the
 * primary hears of the death, so a wait this long means a lock no one will give back (or a
 * holder that cannot end while it waits itself: see `acquire`).
 */
const LOCK_TIMEOUT_MS = 1_000;

/** The lock stayed taken past its timeout: the hit fails rather than waiting for ever. */
export class LockTimeoutError extends Error {
  override readonly name = 'LockTimeoutError';
}

/**
 * A mutual-exclusion lock in a table's first two words: word 0 is 0 when free, else the holder's
 * id (a thread id plus one, never 0), word 1 counts the threads asleep on it, so a release wakes
 * someone only when someone sleeps. Atomics are sequentially consistent: a release that reads no
 * waiter happened before the waiter's own read of word 0, which then finds the lock free.
 */
export class TableLock {
  readonly #word: Int32Array;
  readonly #holder: number;
  readonly #timeoutMs: number;

  constructor(views: TableViews, holder: number, timeoutMs = LOCK_TIMEOUT_MS) {
    if (!Number.isInteger(holder) || holder <= 0) throw new Error('a lock holder is a positive integer');
    this.#word = views.lock;
    this.#holder = holder;
    this.#timeoutMs = timeoutMs;
  }

  acquire(): void {
    const word = this.#word;
    if (Atomics.compareExchange(word, 0, 0, this.#holder) === 0) return;
    // Then read until it looks free before trying again: a failing compare-exchange takes the
    // cache line from the holder each time, a read shares it.
    let deadline = 0;
    for (let tries = 0; ; tries++) {
      const holder = Atomics.load(word, 0);
      if (holder === 0) {
        if (Atomics.compareExchange(word, 0, 0, this.#holder) === 0) return;
      } else if (tries >= SPINS) {
        // The wait must end on its own: a thread told to end (Worker.terminate) while it waits
        // here, inside a request's handler, does not end until the wait returns (without a
        // timeout, not until the lock is freed).
        const now = Date.now();
        if (deadline === 0) deadline = now + this.#timeoutMs;
        else if (now >= deadline) throw new LockTimeoutError(`the limiter table's lock stayed taken (by holder ${String(holder)}) for over ${String(this.#timeoutMs)} ms`);
        Atomics.add(word, 1, 1);
        // Returns at once if the holder has changed since the read.
        Atomics.wait(word, 0, holder, WAIT_MS);
        Atomics.sub(word, 1, 1);
      }
    }
  }

  release(): void {
    const word = this.#word;
    Atomics.store(word, 0, 0);
    if (Atomics.load(word, 1) > 0) Atomics.notify(word, 0, 1);
  }
}

/**
 * Frees the lock if `holder` holds it: called by the primary for a thread that has exited, which
 * may have ended mid-hit (a fatal fault, or Worker.terminate once the thread reaches a point where
 * it can be ended). What it was changing may then be off by that: one window's count, or the
 * entries a sweep was moving.
 */
export function freeLockOf(views: TableViews, holder: number): boolean {
  // 0 is no holder: "freeing" it would only wake sleepers for nothing.
  if (holder <= 0) return false;
  if (Atomics.compareExchange(views.lock, 0, holder, 0) !== holder) return false;
  Atomics.notify(views.lock, 0);
  return true;
}
