import type { Clock } from '../../core/ports/clock.js';
import { answerText } from '../../common/answer-text.js';
import type { DnsResult } from '../../common/dns-types.js';

interface Entry {
  /**
   * The result as its JSON: one string where the decoded result was an object, an array and an
   * object and two or three strings per answer. 10 000 one-answer names asked once (what
   * `npm run bench`'s mixed load fills the cache with) held 553 bytes an entry decoded, 386 as JSON
   * with the flat key below (heap after forced collections). A hit decodes it again at most once
   * a second (`aged`); a name asked once is never decoded again.
   */
  json: string;
  /** The result's `cacheTtl`, read without decoding. */
  cacheTtl: number;
  storedAt: number;
  expiresAt: number;
  /** The estimate counted against the byte bound while the entry is held. */
  bytes: number;
  /** The result as aged at `agedAt` seconds, reused by every hit within that second. */
  aged: CachedResult | undefined;
  agedAt: number;
}

/** A cached result aged to now: TTLs count down from when it was stored. */
export interface CachedResult {
  result: DnsResult;
  /** Seconds the result may still be served. */
  maxAge: number;
}

interface CacheBounds {
  /** Most (name, type) results held. */
  maxEntries: number;
  /** Most bytes held, by `entryBytes`; the least recently used go first past it. */
  maxBytes: number;
  /** A result estimated above this is served but never cached (dnsdist's `maximumEntrySize`). */
  maxEntryBytes: number;
}

/**
 * Fixed costs per answer (its object, its aged copy, its share of the serialised JSON) and per
 * entry (map slot, result, timestamps, envelope), fitted to the heap when entries held the
 * decoded result: 100 000 one-answer entries
 * held 958 bytes each, 50 000 four-answer entries 1 935, 5 000 entries of two 2000-character
 * TXT values 9 416, each with its aged copy and serialised JSON alive (Node 20, forced
 * collections before and after); the estimate gives 986, 2 132 and 9 312. An entry now holds its
 * result as JSON (`Entry.json`), and holds as much as before only while it is being served (its
 * aged copy decoded and its JSON for the route): the estimate stays that bound.
 */
const ANSWER_OVERHEAD = 320;
const ENTRY_OVERHEAD = 560;

/**
 * An estimate of the memory an entry holds while it is served: its key and its answers' text
 * twice (the decoded result and the JSON the DNS route serialises from it), plus the fixed costs
 * above; within about 10% of the heap measured for small and large answers alike.
 */
function entryBytes(key: string, result: DnsResult): number {
  let text = key.length;
  for (const answer of result.answers) text += answer.name.length + answerText(answer).length;
  return ENTRY_OVERHEAD + result.answers.length * ANSWER_OVERHEAD + 2 * text;
}

/**
 * `key` copied into one flat string. A key built from a request (`${type} ${name}`, the name a
 * slice of the query string) is a V8 rope over a slice and keeps that request's whole text alive
 * for as long as the entry lives: a heap snapshot after the mixed load held 8 988 such request
 * texts, 0.72 MB.
 */
function flatCopy(key: string): string {
  return JSON.parse(JSON.stringify(key)) as string;
}

/**
 * TTL-aware LRU of DNS results keyed by (name, type). Entries die with their TTL; the least
 * recently used go first when either the entry cap or the byte bound is reached, so memory is
 * bounded whatever the answers hold (a TXT-heavy name can be 100 KiB decoded).
 */
export class DnsCache {
  readonly #entries = new Map<string, Entry>();
  #bytes = 0;
  readonly #bounds: CacheBounds;

  constructor(
    bounds: number | CacheBounds,
    private readonly clock: Clock,
  ) {
    this.#bounds = typeof bounds === 'number' ? { maxEntries: bounds, maxBytes: Infinity, maxEntryBytes: Infinity } : bounds;
  }

  get(key: string): CachedResult | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    const now = this.clock.now();
    if (now >= entry.expiresAt) {
      this.#remove(key, entry);
      return undefined;
    }
    const elapsed = Math.floor((now - entry.storedAt) / 1000);
    if (entry.aged === undefined || entry.agedAt !== elapsed) {
      const remaining = Math.max(0, entry.cacheTtl - elapsed);
      // Refresh its place in the LRU order, at most once a second: a hot name would otherwise
      // churn the map on every hit.
      this.#entries.delete(key);
      this.#entries.set(key, entry);
      // A fresh decoding each time, so aging it in place leaves nothing else changed.
      const result = JSON.parse(entry.json) as DnsResult;
      for (const answer of result.answers) answer.ttl_seconds = Math.max(0, answer.ttl_seconds - elapsed);
      result.cacheTtl = remaining;
      entry.aged = { result, maxAge: remaining };
      entry.agedAt = elapsed;
    }
    return entry.aged;
  }

  /** Stores a result; returns false when it was not kept (no TTL, caching off, or too large). */
  set(key: string, result: DnsResult): boolean {
    const { maxEntries, maxBytes, maxEntryBytes } = this.#bounds;
    if (result.cacheTtl <= 0 || maxEntries === 0) return false;
    const bytes = entryBytes(key, result);
    if (bytes > maxEntryBytes || bytes > maxBytes) return false;
    const now = this.clock.now();
    const old = this.#entries.get(key);
    if (old !== undefined) this.#remove(key, old);
    const entry: Entry = { json: JSON.stringify(result), cacheTtl: result.cacheTtl, storedAt: now, expiresAt: now + result.cacheTtl * 1000, bytes, aged: undefined, agedAt: -1 };
    this.#entries.set(flatCopy(key), entry);
    this.#bytes += bytes;
    while (this.#entries.size > maxEntries || this.#bytes > maxBytes) {
      const oldest = this.#entries.entries().next().value;
      if (oldest === undefined) break;
      this.#remove(oldest[0], oldest[1]);
    }
    return true;
  }

  #remove(key: string, entry: Entry): void {
    this.#entries.delete(key);
    this.#bytes -= entry.bytes;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The estimated bytes held (see `entryBytes`). */
  get bytes(): number {
    return this.#bytes;
  }
}
