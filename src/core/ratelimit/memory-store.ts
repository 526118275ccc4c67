import type { Clock } from '../ports/clock.js';
import type { LimiterStore, WindowHit } from '../ports/limiter-store.js';
import { TableLock, tableViews } from './shared-table.js';

/** Slots a new table starts with. */
const MIN_CAPACITY = 1024;

/**
 * A table past three quarters full grows by half, not double: after growing it is half full, so a
 * tracked caller costs 21-32 bytes instead of 21-43 (docs/benchmarks.md, "Memory under the mixed load,
 * taken apart", has the mixed load's array buffers either way).
 */
const GROWTH = 1.5;

/**
 * Slots the table grows to at most: 2^21, 32 MiB of typed arrays (55 MiB for the moment of the
 * last growth, old and new side by side), holding 1 572 864 live windows at three quarters full:
 * a minute of 26 000 new sources a second, more than one process serves. Past it, see `#overflow`.
 */
export const MAX_CAPACITY = 2 ** 21;

/** A full table sweeps out ended windows at most this often before it counts a source as overflow. */
const FULL_SWEEP_GAP_MS = 1_000;

/**
 * A window's end is kept as whole milliseconds after the table's epoch in 32 bits (49 days): the
 * epoch starts an hour before the table (a caller of `hitAt` may name a slightly earlier time)
 * and moves up in a sweep once it is 24 days old, when every live window ends within minutes of it.
 */
const EPOCH_SLACK_MS = 3_600_000;
const REBASE_AFTER_MS = 2 ** 31;

/** Where the bookkeeping sits in `#meta` (and in a shared table's header, `shared-table.ts`). */
const META = { size: 0, epoch: 1, nextSweep: 2, lastFullSweep: 3 } as const;
const META_FIELDS = 4;

/**
 * A 64-bit fingerprint of a key as two 32-bit halves (FNV-1a with two offset bases). Keys are
 * `operation:keyed-hash` already, so this only has to spread them, not hide them; two keys
 * meeting on all 64 bits among a million live windows is about one chance in 3·10^7.
 */
function fingerprint(key: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x050c5d1f;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x01000193) ^ (a >>> 15);
  }
  return [a >>> 0, b >>> 0];
}

/**
 * The first slot a fingerprint's high half (32 bits) probes in a table of `capacity` slots: the
 * half scaled to the table, `hi * capacity / 2^32` (exact in a double: the product stays below 2^53).
 */
function homeSlot(hi: number, capacity: number): number {
  return Math.floor((hi * capacity) / 4294967296);
}

/** The slot a probe looks at after `slot`, wrapping at the table's end. */
function nextSlot(slot: number, capacity: number): number {
  return slot + 1 === capacity ? 0 : slot + 1;
}

/**
 * In-process fixed-window counters in an open-addressing table of typed arrays (linear probing):
 * a slot costs 16 bytes (a 64-bit fingerprint, a count, the window's end) and the table is kept at
 * most three quarters full, so a tracked caller costs 21 bytes just before the table grows by half
 * (`GROWTH`) and 32 just after. A key's first slot is its fingerprint's high half scaled to the
 * table's size (Lemire's multiply-shift reduction), so the size need not be a power of two. 840 000 windows (a minute of distinct callers at 14 000 requests/s) take a 23 MiB table; a Map of strings to objects took
 * 215 MiB (about 190 bytes of heap a window). Memory is bounded by the live windows: a sweep at most once per `sweepEveryMs` removes expired ones (with backward
 * shifting, so no tombstones build up) and shrinks a table left mostly empty.
 *
 * However many distinct sources arrive, the table stops at `maxCapacity` slots (a flood of
 * distinct /48s would otherwise grow it without a ceiling). A source already counted keeps its window,
 * count and all: nobody is evicted or reset, so nobody is let through by a flood. A source that
 * arrives while the table is full (after a sweep has removed every ended window) is counted in
 * one shared window per operation and prefix, `#overflow`: together, such newcomers get what one
 * source gets, so a flood of fresh addresses is refused as a whole rather than let through, and
 * the table holds what it held. They are tracked on their own again once windows end and free slots.
 */
export class MemoryLimiterStore implements LimiterStore {
  #hi: Uint32Array;
  #lo: Uint32Array;
  #count: Uint32Array;
  /** When each slot's window ends, in ms after `#epoch`; 0 marks an empty slot. */
  #resetAt: Uint32Array;
  /** The bookkeeping (`META`), in a typed array so threads sharing a table share it too. */
  readonly #meta: Float64Array;
  /** Only for a table shared between threads: taken for each hit, sweep included. */
  readonly #lock: TableLock | undefined;
  readonly #clock: Clock;
  readonly #sweepEveryMs: number;
  readonly #maxCapacity: number;
  /** The shared windows of sources that arrived while the table was full, by key head (`operation` or `operation/prefix`); a thread's own. */
  readonly #overflow = new Map<string, WindowHit>();
  #overflowHits = 0;

  /**
   * A table of this thread's own, or, given `shared` (a buffer from `createSharedTable` and this
   * thread's lock-holder id), a view of one that other threads count in too: its size is fixed,
   * and a flood's overflow windows (below) are each thread's own.
   */
  constructor(clock: Clock, sweepEveryMs = 10_000, maxCapacity = MAX_CAPACITY, shared?: { buffer: SharedArrayBuffer; holder: number }) {
    this.#clock = clock;
    this.#sweepEveryMs = sweepEveryMs;
    if (shared === undefined) {
      if (!Number.isInteger(Math.log2(maxCapacity)) || maxCapacity < MIN_CAPACITY) throw new Error(`maxCapacity must be a power of two of at least ${String(MIN_CAPACITY)}`);
      this.#maxCapacity = maxCapacity;
      [this.#hi, this.#lo, this.#count, this.#resetAt] = [0, 1, 2, 3].map(() => new Uint32Array(MIN_CAPACITY)) as [Uint32Array, Uint32Array, Uint32Array, Uint32Array];
      this.#meta = new Float64Array(META_FIELDS);
      this.#lock = undefined;
      this.#begin();
      return;
    }
    const views = tableViews(shared.buffer);
    if (!Number.isInteger(Math.log2(views.resetAt.length)) || views.resetAt.length < MIN_CAPACITY) throw new Error(`a shared table's capacity must be a power of two of at least ${String(MIN_CAPACITY)}`);
    ({ hi: this.#hi, lo: this.#lo, count: this.#count, resetAt: this.#resetAt, meta: this.#meta } = views);
    this.#maxCapacity = views.resetAt.length;
    this.#lock = new TableLock(views, shared.holder);
    this.#lock.acquire();
    try {
      // The first thread to arrive begins the table's bookkeeping (a zeroed buffer's epoch is 0).
      if (this.#epoch === 0) this.#begin();
    } finally {
      this.#lock.release();
    }
  }

  #begin(): void {
    const now = this.#clock.now();
    this.#nextSweep = now + this.#sweepEveryMs;
    this.#epoch = now - EPOCH_SLACK_MS;
    this.#lastFullSweep = Number.NEGATIVE_INFINITY;
  }

  /** Live windows. */
  get #size(): number {
    return this.#meta[META.size] ?? 0;
  }
  set #size(value: number) {
    this.#meta[META.size] = value;
  }
  get #epoch(): number {
    return this.#meta[META.epoch] ?? 0;
  }
  set #epoch(value: number) {
    this.#meta[META.epoch] = value;
  }
  get #nextSweep(): number {
    return this.#meta[META.nextSweep] ?? 0;
  }
  set #nextSweep(value: number) {
    this.#meta[META.nextSweep] = value;
  }
  /** When a full table last swept early (`FULL_SWEEP_GAP_MS`). */
  get #lastFullSweep(): number {
    return this.#meta[META.lastFullSweep] ?? 0;
  }
  set #lastFullSweep(value: number) {
    this.#meta[META.lastFullSweep] = value;
  }

  /** A window's end (epoch ms) as a slot holds it: at least 1, so it never reads as empty. */
  #stored(resetAt: number): number {
    return Math.min(0xffffffff, Math.max(1, Math.ceil(resetAt - this.#epoch)));
  }

  hit(key: string, windowMs: number): WindowHit {
    return this.hitAt(key, windowMs, this.#clock.now());
  }

  /**
   * A hit at a time the caller names (the bench replays traffic on its own time line); taken
   * under the lock when the table is shared between threads.
   */
  hitAt(key: string, windowMs: number, now: number): WindowHit {
    const lock = this.#lock;
    if (lock === undefined) return this.#hitAt(key, windowMs, now);
    lock.acquire();
    try {
      return this.#hitAt(key, windowMs, now);
    } finally {
      lock.release();
    }
  }

  #hitAt(key: string, windowMs: number, now: number): WindowHit {
    if (now >= this.#nextSweep) {
      // A shared table keeps all its slots whatever it holds, and a sweep reads every one (5 ms
      // for 2^21, under the lock every thread waits on): it sweeps once its windows fill an
      // eighth of them, below which probes stay short; a full table sweeps anyway (below).
      if (this.#lock === undefined || this.#size * 8 >= this.#resetAt.length) this.#sweep(now);
      else this.#nextSweep = now + this.#sweepEveryMs;
    }
    if (now < this.#epoch || now - this.#epoch >= REBASE_AFTER_MS) this.#rebase(now);
    const [hi, lo] = fingerprint(key);
    const capacity = this.#resetAt.length;
    let slot = homeSlot(hi, capacity);
    for (;;) {
      const stored = this.#resetAt[slot] ?? 0;
      if (stored === 0) break;
      if (this.#hi[slot] === hi && this.#lo[slot] === lo) {
        if (now >= stored + this.#epoch) {
          this.#count[slot] = 0;
          this.#resetAt[slot] = this.#stored(now + windowMs);
        }
        const count = (this.#count[slot] ?? 0) + 1;
        this.#count[slot] = count;
        return { count, resetAt: (this.#resetAt[slot] ?? 0) + this.#epoch };
      }
      slot = nextSlot(slot, capacity);
    }
    if (this.#full()) {
      if (now - this.#lastFullSweep < FULL_SWEEP_GAP_MS) return this.#overflowHit(key, windowMs, now);
      this.#lastFullSweep = now;
      this.#sweep(now);
      // Slots moved, or the table shrank: find the new key's place again.
      if (this.#full()) return this.#overflowHit(key, windowMs, now);
      return this.#hitAt(key, windowMs, now);
    }
    this.#hi[slot] = hi;
    this.#lo[slot] = lo;
    this.#count[slot] = 1;
    const stored = this.#stored(now + windowMs);
    this.#resetAt[slot] = stored;
    this.#size += 1;
    // At most three quarters full: a new caller's probe (the common case, an unsuccessful search)
    // then looks at 8.5 slots on average, linear probing's (1 + 1/(1-load)²)/2, all in four typed
    // arrays; half full took 2.5 but twice the memory for the same callers.
    if (this.#size * 4 > capacity * 3) this.#resize(Math.min(this.#maxCapacity, Math.ceil(capacity * GROWTH)), now);
    return { count: 1, resetAt: stored + this.#epoch };
  }

  /** At the largest size and as full as a table is let be: one more window would need a doubling. */
  #full(): boolean {
    return this.#resetAt.length >= this.#maxCapacity && (this.#size + 1) * 4 > this.#resetAt.length * 3;
  }

  /** Counts `key` in the shared window of its operation (and prefix): see the class's comment. */
  #overflowHit(key: string, windowMs: number, now: number): WindowHit {
    this.#overflowHits += 1;
    const head = key.slice(0, Math.max(0, key.indexOf(':')));
    let window = this.#overflow.get(head);
    if (window === undefined || now >= window.resetAt) {
      window = { count: 0, resetAt: now + windowMs };
      this.#overflow.set(head, window);
    }
    window.count += 1;
    return { count: window.count, resetAt: window.resetAt };
  }

  /** Hits counted in the shared overflow windows since the store began (for tests and metrics). */
  get overflowHits(): number {
    return this.#overflowHits;
  }

  /** Live entries (for tests of the memory bound and for metrics). */
  get size(): number {
    return this.#size;
  }

  /** Slots allocated (for tests of the memory bound). */
  get capacity(): number {
    return this.#resetAt.length;
  }

  #sweep(now: number): void {
    this.#nextSweep = now + this.#sweepEveryMs;
    const resetAt = this.#resetAt;
    const capacity = resetAt.length;
    // Start right after an empty slot, so no cluster wraps around the scan's start: every
    // backward shift then moves an entry to a slot the scan has already passed or is on.
    let start = 0;
    while ((resetAt[start] ?? 0) !== 0) start += 1; // the table is at most 3/4 full: one exists
    let slot = nextSlot(start, capacity);
    const epoch = this.#epoch;
    for (let passed = 0; passed < capacity; ) {
      const ends = resetAt[slot] ?? 0;
      if (ends !== 0 && now >= ends + epoch) {
        // The slot then holds whatever was shifted into it: it is looked at again.
        this.#remove(slot);
      } else {
        slot = nextSlot(slot, capacity);
        passed += 1;
      }
    }
    // A shared table keeps its size: the other threads hold views of these arrays.
    if (this.#lock === undefined && this.#size * 8 < capacity && capacity > MIN_CAPACITY) this.#resize(Math.max(MIN_CAPACITY, Math.ceil(capacity / 4)), now);
    if (now - this.#epoch >= REBASE_AFTER_MS) this.#rebase(now);
  }

  /**
   * Moves the epoch to an hour before `now`, each window still ending where it did. After a sweep
   * every window left ends after `now`, so each still fits; called for a `now` before the epoch
   * (a `hitAt` time earlier than the table began), a window that would end before the new epoch
   * has ended anyway and is kept as ending just after it.
   */
  #rebase(now: number): void {
    const later = now - EPOCH_SLACK_MS;
    const shift = later - this.#epoch;
    const table = this.#resetAt;
    for (let i = 0; i < table.length; i++) {
      const stored = table[i] ?? 0;
      if (stored !== 0) table[i] = Math.min(0xffffffff, Math.max(1, stored - shift));
    }
    this.#epoch = later;
  }

  /** Empties `slot` and shifts back the entries after it that probed past it (Knuth's Algorithm R). */
  #remove(slot: number): void {
    const capacity = this.#resetAt.length;
    let hole = slot;
    let next = nextSlot(slot, capacity);
    while ((this.#resetAt[next] ?? 0) !== 0) {
      const home = homeSlot(this.#hi[next] ?? 0, capacity);
      // An entry may move into the hole when its home is not cyclically within (hole, next].
      if (hole <= next ? home <= hole || home > next : home <= hole && home > next) {
        this.#hi[hole] = this.#hi[next] ?? 0;
        this.#lo[hole] = this.#lo[next] ?? 0;
        this.#count[hole] = this.#count[next] ?? 0;
        this.#resetAt[hole] = this.#resetAt[next] ?? 0;
        hole = next;
      }
      next = nextSlot(next, capacity);
    }
    this.#resetAt[hole] = 0;
    this.#size -= 1;
  }

  /** Moves the live windows into a table of `capacity` slots, leaving expired ones behind. */
  #resize(capacity: number, now: number): void {
    const [hi, lo, count, resetAt] = [this.#hi, this.#lo, this.#count, this.#resetAt];
    this.#hi = new Uint32Array(capacity);
    this.#lo = new Uint32Array(capacity);
    this.#count = new Uint32Array(capacity);
    this.#resetAt = new Uint32Array(capacity);
    this.#size = 0;
    for (let i = 0; i < resetAt.length; i++) {
      const ends = resetAt[i] ?? 0;
      if (ends === 0 || now >= ends + this.#epoch) continue;
      let slot = homeSlot(hi[i] ?? 0, capacity);
      while ((this.#resetAt[slot] ?? 0) !== 0) slot = nextSlot(slot, capacity);
      this.#hi[slot] = hi[i] ?? 0;
      this.#lo[slot] = lo[i] ?? 0;
      this.#count[slot] = count[i] ?? 0;
      this.#resetAt[slot] = ends;
      this.#size += 1;
    }
  }
}
