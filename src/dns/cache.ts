import type { Clock } from '../services.js';
import type { DnsResult } from './types.js';

interface Entry {
  result: DnsResult;
  storedAt: number;
  expiresAt: number;
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

/**
 * TTL-aware LRU of DNS results keyed by (name, type). Entries die with their TTL; the least
 * recently used goes first when the cap is reached, so memory is bounded by `maxEntries`.
 */
export class DnsCache {
  readonly #entries = new Map<string, Entry>();

  constructor(
    readonly maxEntries: number,
    private readonly clock: Clock,
  ) {}

  get(key: string): CachedResult | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    const now = this.clock.now();
    if (now >= entry.expiresAt) {
      this.#entries.delete(key);
      return undefined;
    }
    const elapsed = Math.floor((now - entry.storedAt) / 1000);
    if (entry.aged === undefined || entry.agedAt !== elapsed) {
      const remaining = Math.max(0, entry.result.cacheTtl - elapsed);
      // Refresh its place in the LRU order, at most once a second: a hot name would otherwise
      // churn the map on every hit.
      this.#entries.delete(key);
      this.#entries.set(key, entry);
      const answers = entry.result.answers.map((a) => ({ ...a, ttl_seconds: Math.max(0, a.ttl_seconds - elapsed) }));
      entry.aged = { result: { ...entry.result, answers, cacheTtl: remaining }, maxAge: remaining };
      entry.agedAt = elapsed;
    }
    return entry.aged;
  }

  set(key: string, result: DnsResult): void {
    if (result.cacheTtl <= 0 || this.maxEntries === 0) return;
    const now = this.clock.now();
    this.#entries.delete(key);
    this.#entries.set(key, { result, storedAt: now, expiresAt: now + result.cacheTtl * 1000, aged: undefined, agedAt: -1 });
    while (this.#entries.size > this.maxEntries) {
      const oldest = this.#entries.keys().next().value;
      if (oldest === undefined) break;
      this.#entries.delete(oldest);
    }
  }

  get size(): number {
    return this.#entries.size;
  }
}
