import { describe, expect, it } from 'vitest';
import { DnsCache } from './cache.js';
import type { DnsResult } from '../../common/dns-types.js';
import { ManualClock } from '../../core/ports/clock.conformance.js';

const result = (ttl: number): DnsResult => ({
  responseCode: 'no_error',
  answers: [{ type: 'A', name: 'a.example', ttl_seconds: ttl, address: '192.0.2.1' }],
  cacheTtl: ttl,
});

describe('DnsCache', () => {
  it('ages TTLs and drops an entry when its TTL is spent', () => {
    const clock = new ManualClock();
    const cache = new DnsCache(10, clock);
    cache.set('k', result(3));
    clock.advance(1500);
    expect(cache.get('k')).toMatchObject({ maxAge: 2, result: { answers: [{ ttl_seconds: 2 }] } });
    clock.advance(1500);
    expect(cache.get('k')).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('ages each second from the stored answer, which neither the caller that stored it nor one served it can change', () => {
    const clock = new ManualClock();
    const cache = new DnsCache(10, clock);
    const stored = result(10);
    cache.set('k', stored);
    for (const answer of stored.answers) answer.ttl_seconds = 1;
    clock.advance(2000);
    const served = cache.get('k');
    expect(served).toMatchObject({ maxAge: 8, result: { cacheTtl: 8, answers: [{ ttl_seconds: 8, address: '192.0.2.1' }] } });
    // Within the same second the same copy is served again; a later second counts from the stored 10 s.
    expect(cache.get('k')).toBe(served);
    for (const answer of served?.result.answers ?? []) answer.ttl_seconds = 0;
    clock.advance(3000);
    expect(cache.get('k')).toMatchObject({ maxAge: 5, result: { cacheTtl: 5, answers: [{ ttl_seconds: 5, name: 'a.example', type: 'A' }] } });
  });

  it('keeps nothing with a zero TTL', () => {
    const cache = new DnsCache(10, new ManualClock());
    cache.set('k', result(0));
    expect(cache.get('k')).toBeUndefined();
  });

  it('holds at most its cap, dropping the least recently used', () => {
    const cache = new DnsCache(2, new ManualClock());
    cache.set('a', result(60));
    cache.set('b', result(60));
    cache.get('a');
    cache.set('c', result(60));
    expect(cache.size).toBe(2);
    expect(cache.get('b')).toBeUndefined();
    expect(cache.get('a')).toBeDefined();
    expect(cache.get('c')).toBeDefined();
  });
});
