// Rate limits on Workers: a Durable Object counter per (operation, keyed hash) - exact, global,
// reports what remains - or the platform's rate-limiting binding (yes or no, no remaining), each
// held to the limiter conformance suite and exhausted over HTTP.
import { env } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { LIMIT_BINDINGS, type BoundOperation } from '../../src/runtime/workers/adapter/config.js';
import type { WorkerEnv } from '../../src/runtime/workers/adapter/env.js';
import { BindingLimiterStore } from '../../src/runtime/workers/ports/limiter-store/binding.js';
import { DurableObjectLimiterStore } from '../../src/runtime/workers/ports/limiter-store/durable-object.js';
import { expectContract } from '../support/contract.js';
import { limiterConformance, verdictConformance } from '../../src/core/ports/limiter-store.conformance.js';
import { codeOf, workerWith } from './worker.js';

const bound = env as unknown as WorkerEnv;

limiterConformance('Durable Object counter', {
  create: (clock) => {
    const store = new DurableObjectLimiterStore(bound.RATE_LIMITER as NonNullable<WorkerEnv['RATE_LIMITER']>, clock);
    // Keys made unique per store, so each case starts from empty objects.
    const prefix = `ip:${crypto.randomUUID()}-`;
    return { hit: (key: string, windowMs: number) => store.hit(`${prefix}${key}`, windowMs) };
  },
});

const bindings = Object.fromEntries(Object.entries(LIMIT_BINDINGS).map(([op, binding]) => [op, bound[binding] as RateLimit])) as Record<BoundOperation, RateLimit>;
verdictConformance('rate-limiting binding (dns, 30 per 60 s)', {
  limit: 30,
  create: () => {
    const store = new BindingLimiterStore(bindings, { now: () => Date.now() });
    const prefix = crypto.randomUUID();
    return { hit: (key: string) => store.hit(`dns:${prefix}${key}`) };
  },
});

describe('limits exhausted over HTTP in workerd', () => {
  it('Durable Object limiter: RateLimit-Remaining counts down to 0, then 429 with Retry-After', async () => {
    const worker = workerWith({ NETDIAG_LIMITER: 'durable-object', NETDIAG_RATE_LIMITS: 'ip=3' });
    const caller = '198.51.100.50';
    const remaining: (string | null)[] = [];
    for (let i = 0; i < 3; i++) remaining.push((await worker.send('/v1/ip', { caller })).headers.get('ratelimit-remaining'));
    expect(remaining).toEqual(['2', '1', '0']);
    const over = await worker.send('/v1/ip', { caller });
    expectContract('GET', '/v1/ip', over);
    expect(over.status).toBe(429);
    expect(codeOf(over)).toBe('rate_limit_exceeded');
    expect(over.headers.get('ratelimit-limit')).toBe('3');
    expect(over.headers.get('ratelimit-remaining')).toBe('0');
    expect(over.headers.get('retry-after')).toBe(over.headers.get('ratelimit-reset'));
    // Another source has its own window.
    expect((await worker.send('/v1/ip', { caller: '198.51.100.51' })).headers.get('ratelimit-remaining')).toBe('2');
  });

  it("Durable Object limiter: an IPv6 source's /56 is counted at 4 times the limit, another /56 is served", async () => {
    const worker = workerWith({ NETDIAG_LIMITER: 'durable-object', NETDIAG_RATE_LIMITS: 'ip=3' });
    // Four /64s of 2001:db8:7:100::/56 at their own limit of 3: the /56's 12.
    for (let net = 0; net < 4; net++) {
      for (let i = 0; i < 3; i++) expect((await worker.send('/v1/ip', { caller: `2001:db8:7:1${String(net)}0::${String(i + 1)}` })).status).toBe(200);
    }
    const over = await worker.send('/v1/ip', { caller: '2001:db8:7:1ff::1' });
    expectContract('GET', '/v1/ip', over);
    expect(over.status).toBe(429);
    expect(over.headers.get('ratelimit-limit')).toBe('12');
    expect(over.headers.get('ratelimit-remaining')).toBe('0');
    expect((await worker.send('/v1/ip', { caller: '2001:db8:7:200::1' })).status).toBe(200);
  });

  it('rate-limiting binding: 429 after its limit, with no RateLimit-Remaining on any reply', async () => {
    const worker = workerWith({ NETDIAG_LIMITER: 'binding' });
    const caller = '198.51.100.52';
    for (let i = 0; i < 30; i++) {
      const res = await worker.send('/v1/latency/regions/apac-se/probe', { caller });
      expect(res.status).toBe(503);
      expect(res.headers.get('ratelimit-limit')).toBe('30');
      expect(res.headers.has('ratelimit-remaining')).toBe(false);
    }
    const over = await worker.send('/v1/latency/regions/apac-se/probe', { caller });
    expectContract('GET', '/v1/latency/regions/{region}/probe', over);
    expect(over.status).toBe(429);
    expect(over.headers.has('ratelimit-remaining')).toBe(false);
    expect(Number(over.headers.get('ratelimit-reset'))).toBeGreaterThanOrEqual(1);
    expect(Number(over.headers.get('ratelimit-reset'))).toBeLessThanOrEqual(60);
    expect(over.headers.get('retry-after')).toBe(over.headers.get('ratelimit-reset'));
  });

  it('the counters are keyed by a hash, never the address', async () => {
    const { listDurableObjectIds } = await import('cloudflare:test');
    const worker = workerWith({ NETDIAG_LIMITER: 'durable-object' });
    await worker.send('/v1/ip', { caller: '198.51.100.53' });
    const ids = await listDurableObjectIds(bound.RATE_LIMITER as NonNullable<WorkerEnv['RATE_LIMITER']>);
    expect(ids.length).toBeGreaterThan(0);
    for (const id of ids) expect(id.name ?? '').not.toContain('198.51.100.53');
  });
});
