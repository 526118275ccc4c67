// Per-source, per-operation limits over a real socket (the API contract, docs/api.md, "Rate limits").
import { afterEach, describe, expect, it } from 'vitest';
import { expectContract } from '../support/contract.js';
import { send, type Reply } from '../support/http.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(env: Record<string, string> = {}): Promise<TestServer> {
  server = await startTestServer({ NETDIAG_RATE_LIMITS: 'ip=3,dns=2,probe=2,events=2', ...env });
  return server;
}

/** A header as a number; NaN when it is missing (Number(null) would be 0, and pass for "none remaining"). */
const headerNumber = (res: Reply, name: string): number => {
  const value = res.headers.get(name);
  return value === null ? Number.NaN : Number(value);
};

function limitHeaders(res: Reply) {
  return {
    limit: headerNumber(res, 'ratelimit-limit'),
    remaining: headerNumber(res, 'ratelimit-remaining'),
    reset: headerNumber(res, 'ratelimit-reset'),
  };
}

describe('rate limiting', () => {
  it('answers the N+1st request in a window with 429 and all four headers', async () => {
    const s = await start();
    const remaining: number[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await send(`${s.url}/v1/ip`);
      expect(res.status).toBe(200);
      const h = limitHeaders(res);
      expect(h.limit).toBe(3);
      expect(h.reset).toBeGreaterThanOrEqual(1);
      expect(h.reset).toBeLessThanOrEqual(60);
      remaining.push(h.remaining);
    }
    expect(remaining).toEqual([2, 1, 0]);

    const limited = await send(`${s.url}/v1/ip`);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('content-type')).toBe('application/problem+json');
    expect((limited.body as { code: string }).code).toBe('rate_limit_exceeded');
    const h = limitHeaders(limited);
    expect(h).toMatchObject({ limit: 3, remaining: 0 });
    expect(h.reset).toBeGreaterThanOrEqual(1);
    expect(limited.headers.get('retry-after')).toBe(String(h.reset));
    expect(limited.headers.get('cache-control')).toBe('no-store');
    expectContract('GET', '/v1/ip', limited);
  });

  it('keeps operations apart: spending one leaves the others whole', async () => {
    const s = await start();
    for (let i = 0; i < 3; i++) await send(`${s.url}/v1/dns/resolve?name=a.example&type=A`);
    expect((await send(`${s.url}/v1/dns/resolve?name=a.example&type=A`)).status).toBe(429);
    const ip = await send(`${s.url}/v1/ip`);
    expect(ip.status).toBe(200);
    expect(limitHeaders(ip).remaining).toBe(2);
    // An invalid event still spends its own operation's quota, not the spent DNS one.
    const events = await send(`${s.url}/v1/events`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
    expect(events.status).toBe(400);
    expect(limitHeaders(events).remaining).toBe(1);
    expect((await send(`${s.url}/v1/health`)).status).toBe(200);
  });

  it('keeps sources apart: another peer address has its own window', async () => {
    const s = await start();
    for (let i = 0; i < 3; i++) await send(`${s.url}/v1/ip`, { localAddress: '127.0.0.1' });
    expect((await send(`${s.url}/v1/ip`, { localAddress: '127.0.0.1' })).status).toBe(429);
    const other = await send(`${s.url}/v1/ip`, { localAddress: '127.0.0.2' });
    expect(other.status).toBe(200);
    expect(limitHeaders(other).remaining).toBe(2);
  });

  it('ignores forwarding headers from an untrusted peer', async () => {
    const s = await start();
    for (let i = 0; i < 3; i++) {
      await send(`${s.url}/v1/ip`, { headers: { 'X-Forwarded-For': `203.0.113.${i}`, Forwarded: `for=198.51.100.${i}` } });
    }
    const res = await send(`${s.url}/v1/ip`, { headers: { 'X-Forwarded-For': '203.0.113.99' } });
    expect(res.status).toBe(429);
  });

  it('uses the forwarded address from a trusted proxy, IPv6 by /64', async () => {
    const s = await start({ NETDIAG_TRUST_PROXY: 'loopback' });
    const via = (xff: string) => send(`${s.url}/v1/ip`, { headers: { 'X-Forwarded-For': xff } });
    for (let i = 0; i < 3; i++) await via(`2001:db8:1:2::${i + 1}`);
    // Same /64, different interface id: same source.
    expect((await via('2001:db8:1:2:ffff::1')).status).toBe(429);
    // Another /64, and another IPv4 client: their own windows.
    expect((await via('2001:db8:1:3::1')).status).toBe(200);
    expect((await via('198.51.100.20')).status).toBe(200);
  });

  // Issue 37: one holder of a /48 has 65 536 /64s, each with a window of its own. The /56 and the
  // /48 are counted too, at 4 and 16 times the limit (docs/api.md, "Rate limits").
  it("counts an IPv6 source's /56 at 4 times the limit: many /64s of one /56 spend it while another /56 is served", async () => {
    const s = await start({ NETDIAG_TRUST_PROXY: 'loopback' });
    const via = (xff: string) => send(`${s.url}/v1/ip`, { headers: { 'X-Forwarded-For': xff } });
    // Three /64s of 2001:db8:1:100::/56, each at its own limit of 3: 9 of the /56's 12.
    for (const net of ['100', '101', '102']) for (let i = 0; i < 3; i++) expect((await via(`2001:db8:1:${net}::${i + 1}`)).status).toBe(200);
    // A fourth /64 has 2 left of its own but the /56 has 2 left too after this one: the headers
    // name the window with least left, and of equals the one that resets last (the /64's).
    const fresh = await via('2001:db8:1:1ff::1');
    expect(limitHeaders(fresh)).toMatchObject({ limit: 3, remaining: 2 });
    await via('2001:db8:1:1ff::2');
    const last = await via('2001:db8:1:1fe::1');
    expect(last.status).toBe(200);
    expect(limitHeaders(last)).toMatchObject({ limit: 12, remaining: 0 });
    // A fifth /64, never seen: refused by the /56's window, which the problem names.
    const refused = await via('2001:db8:1:1a0::1');
    expect(refused.status).toBe(429);
    expect(limitHeaders(refused)).toMatchObject({ limit: 12, remaining: 0 });
    expect(refused.headers.get('retry-after')).toBe(refused.headers.get('ratelimit-reset'));
    expect((refused.body as { detail: string }).detail).toContain("this source's /56");
    expectContract('GET', '/v1/ip', refused);
    // Another /56 of the same /48, and an IPv4 caller: served.
    expect((await via('2001:db8:1:200::1')).status).toBe(200);
    expect((await via('198.51.100.20')).status).toBe(200);
  });

  it("counts an IPv6 source's /48 at 16 times the limit: four spent /56s spend it while another /48 is served", async () => {
    const s = await start({ NETDIAG_TRUST_PROXY: 'loopback' });
    const via = (xff: string) => send(`${s.url}/v1/ip`, { headers: { 'X-Forwarded-For': xff } });
    // Four /56s of 2001:db8:2::/48, four /64s each, three requests each: the /48's 48.
    for (let net = 0; net < 4; net++) {
      for (let sub = 0; sub < 4; sub++) {
        for (let i = 0; i < 3; i++) expect((await via(`2001:db8:2:${(net * 0x100 + sub).toString(16)}::${i + 1}`)).status).toBe(200);
      }
    }
    const refused = await via('2001:db8:2:ff00::1');
    expect(refused.status).toBe(429);
    expect(limitHeaders(refused)).toMatchObject({ limit: 48, remaining: 0 });
    expect((refused.body as { detail: string }).detail).toContain("this source's /48");
    expect((await via('2001:db8:3::1')).status).toBe(200);
  });

  it('counts HEAD against the same limit as GET', async () => {
    const s = await start();
    await send(`${s.url}/v1/ip`, { method: 'HEAD' });
    await send(`${s.url}/v1/ip`);
    await send(`${s.url}/v1/ip`, { method: 'HEAD' });
    const res = await send(`${s.url}/v1/ip`, { method: 'HEAD' });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe(res.headers.get('ratelimit-reset'));
  });

  it('keeps no client address in its logs', async () => {
    const s = await start({ NETDIAG_TRUST_PROXY: 'loopback', NETDIAG_ACCESS_LOG: 'on' });
    for (let i = 0; i < 4; i++) await send(`${s.url}/v1/ip`, { headers: { 'X-Forwarded-For': '198.51.100.77' } });
    expect(s.logs().length).toBeGreaterThan(4);
    expect(s.rawLogs()).not.toContain('198.51.100.77');
    // The server's own listening address is logged at start; no request line names the peer.
    const requestLines = s.logs().filter((entry) => entry.msg !== 'listening');
    expect(JSON.stringify(requestLines)).not.toContain('127.0.0.1');
  });
});
