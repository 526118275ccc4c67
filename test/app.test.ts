// In-process: the core through its Web-standard `fetch`, with in-memory ports.
import { describe, expect, it } from 'vitest';
import { createApp } from '../src/app/app.js';
import { Problem } from '../src/core/http/problems.js';
import type { RouteDefinition } from '../src/core/http/router.js';
import { MemoryLimiterStore } from '../src/core/ratelimit/memory-store.js';
import type { LimiterStore } from '../src/core/ports/limiter-store.js';
import { keyedHasher } from '../src/runtime/node/ports/limiter-store/limiter.js';
import { expectSchema } from './support/contract.js';
import { loopback, memoryLogger, testServices } from './support/services.js';

describe('app.fetch', () => {
  it('answers the envelope with the time of its clock', async () => {
    const services = testServices();
    const app = createApp(services);
    const res = await app.fetch(new Request('http://api.test/v1/health'), loopback);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { meta: Record<string, unknown> };
    expect(body.meta.requested_at).toBe(new Date(services.ports.clock.now()).toISOString());
    expect(Number(res.headers.get('content-length'))).toBe(new TextEncoder().encode(JSON.stringify(body)).length);
  });

  it('drops the body of HEAD but keeps the GET\'s Content-Length', async () => {
    const app = createApp(testServices());
    const get = await app.fetch(new Request('http://api.test/v1/speed-test/configuration'), loopback);
    const getBytes = new Uint8Array(await get.arrayBuffer()).length;
    const res = await app.fetch(new Request('http://api.test/v1/speed-test/configuration', { method: 'HEAD' }), loopback);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('');
    expect(Number(res.headers.get('content-length'))).toBe(getBytes);
    expect(res.headers.get('content-length')).toBe(get.headers.get('content-length'));
  });

  it('resets a rate-limit window after 60 s of its clock', async () => {
    const services = testServices({ limits: { ip: 1, dns: 1, probe: 1, events: 1, speedtest: 1, rpm: 6000, turn: 1, port: 1 } });
    const app = createApp(services);
    expect((await app.fetch(new Request('http://api.test/v1/ip'), loopback)).status).toBe(200);
    services.ports.clock.advance(59_000);
    const limited = await app.fetch(new Request('http://api.test/v1/ip'), loopback);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');
    services.ports.clock.advance(1_000);
    expect((await app.fetch(new Request('http://api.test/v1/ip'), loopback)).status).toBe(200);
  });

  it('keys rate-limit windows by a keyed hash of the source, never the address itself', async () => {
    const keys: string[] = [];
    const store = new MemoryLimiterStore({ now: () => 0 });
    const recording: LimiterStore = { hit: (key, windowMs) => { keys.push(key); return store.hit(key, windowMs); } };
    const app = createApp(testServices({ limiter: recording, keyedHash: keyedHasher('a-secret-of-at-least-thirty-two-characters') }));
    for (const peer of ['198.51.100.77', '2001:db8:77::1']) {
      expect((await app.fetch(new Request('http://api.test/v1/ip'), { ...loopback, peerAddress: peer })).status).toBe(200);
    }
    // One window for the IPv4 source; the IPv6 source's /64, /56 and /48.
    expect(keys).toHaveLength(4);
    expect(keys.map((key) => key.slice(0, key.indexOf(':')))).toEqual(['ip', 'ip', 'ip/56', 'ip/48']);
    for (const key of keys) {
      expect(key).toMatch(/^ip(?:\/56|\/48)?:[A-Za-z0-9_-]{43}$/);
      expect(key).not.toContain('198.51.100');
      expect(key.toLowerCase()).not.toContain('2001:db8');
    }
    // Another secret hashes the same source to another key.
    expect(keyedHasher('another-secret-of-at-least-thirty-two-chars')('198.51.100.77')).not.toBe(keys[0]?.slice(3));
  });
});

describe('internal failures', () => {
  it('become a 500 problem that reveals nothing, and are logged with the request id only', async () => {
    const logger = memoryLogger();
    const broken: LimiterStore = {
      hit: () => Promise.reject(new Error('connect ECONNREFUSED 10.1.2.3:6379 at secret/path.ts:12')),
    };
    const app = createApp(testServices({ limiter: broken, logger }));
    const res = await app.fetch(new Request('http://api.test/v1/ip'), loopback);
    expect(res.status).toBe(500);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    const text = await res.text();
    expect(text).not.toMatch(/ECONNREFUSED|10\.1\.2\.3|secret|\.ts/);
    const problem = JSON.parse(text) as Record<string, unknown>;
    expectSchema('Problem', problem);
    expect(problem).toMatchObject({ status: 500, code: 'internal_error', type: 'http://api.test/problems/internal_error' });

    const logged = logger.entries.find((e) => e.level === 'error');
    expect(logged?.obj.request_id).toBe(problem.request_id);
    expect(JSON.stringify(logged?.obj)).not.toContain('127.0.0.1');
  });

  it('a port that throws instead of rejecting is also a 500', async () => {
    const app = createApp(
      testServices({
        keyedHash: () => {
          throw new TypeError('boom');
        },
      }),
    );
    const res = await app.fetch(new Request('http://api.test/v1/dns/resolve?name=a&type=A'), loopback);
    expect(res.status).toBe(500);
    expect(await res.text()).not.toContain('boom');
  });
});

describe('the one request pipeline', () => {
  const ok = (): { status: number; headers: string[]; body: string } => ({ status: 200, headers: [], body: 'ok' });

  it('a route added with a declared operation is limited by the app, without calling the limiter itself', async () => {
    const services = testServices({ limits: { ip: 100, dns: 100, probe: 2, events: 100, speedtest: 100, rpm: 6000, turn: 100, port: 100 } });
    let handled = 0;
    const app = createApp(services, [{ path: '/v1/test-route', GET: { limit: 'probe', handle: () => { handled += 1; return ok(); } } }]);
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await app.fetch(new Request('http://api.test/v1/test-route'), loopback)).status);
    expect(statuses).toEqual([200, 200, 429, 429]);
    // The limit is counted before the handler: refused requests never reach it.
    expect(handled).toBe(2);
  });

  it('a route\'s own checks run before the limit, so a request they refuse costs no quota', async () => {
    const services = testServices({ limits: { ip: 100, dns: 100, probe: 1, events: 100, speedtest: 100, rpm: 6000, turn: 100, port: 100 } });
    const app = createApp(services, [{
      path: '/v1/test-route/:x',
      GET: { limit: 'probe', accept: (ctx) => { if (ctx.params.x !== 'good') throw new Problem('unknown_region', 'not good'); }, handle: ok },
    }]);
    expect((await app.fetch(new Request('http://api.test/v1/test-route/bad'), loopback)).status).toBe(400);
    expect((await app.fetch(new Request('http://api.test/v1/test-route/bad'), loopback)).status).toBe(400);
    expect((await app.fetch(new Request('http://api.test/v1/test-route/good'), loopback)).status).toBe(200);
    expect((await app.fetch(new Request('http://api.test/v1/test-route/good'), loopback)).status).toBe(429);
  });

  it('a route with no operation declared does not type-check, and is refused at start-up', () => {
    const services = testServices();
    // @ts-expect-error -- `limit` is required: a route must say which limit it counts against, or null.
    const undeclared: RouteDefinition = { path: '/v1/forgot', GET: { handle: ok } };
    expect(() => createApp(services, [undeclared])).toThrow(/GET \/v1\/forgot declares no rate-limit operation/);
    const unknown = { path: '/v1/typo', GET: { limit: 'dsn', handle: ok } } as unknown as RouteDefinition;
    expect(() => createApp(services, [unknown])).toThrow(/unknown rate-limit operation "dsn"/);
  });

  it('every built-in route declares its operation as the spec names it', async () => {
    // A route that dropped its limit would answer past it; these are the limited ones (the API contract).
    const services = testServices({ limits: { ip: 1, dns: 1, probe: 1, events: 1, speedtest: 1, rpm: 6000, turn: 1, port: 1 } });
    const app = createApp(services);
    for (const path of ['/v1/ip', '/']) {
      await app.fetch(new Request(`http://api.test${path}`), loopback);
    }
    expect((await app.fetch(new Request('http://api.test/v1/ip'), loopback)).status).toBe(429);
    const dns = 'http://api.test/v1/dns/resolve?name=example.com&type=A';
    await app.fetch(new Request(dns), loopback);
    expect((await app.fetch(new Request(dns), loopback)).status).toBe(429);
    // Static documents are never limited.
    for (let i = 0; i < 3; i++) expect((await app.fetch(new Request('http://api.test/v1/health'), loopback)).status).toBe(200);
  });
});
