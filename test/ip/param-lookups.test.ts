// `?ip=` and the resolver (issue 50): another address's PTR goes through the shared TTL cache, is
// charged to the `dns` limit as well as `ip`, and is never asked for a special-use address unless
// the operator opts in (NETDIAG_IP_PARAM_SPECIAL_PTR=on), so nobody reads the operator's private
// reverse zones through it. Knot answers the names; a FAKE upstream whose reverse zones never
// answer (test/support/fake-dns.ts) counts the queries that were sent, which no real server
// reports on demand. And the text answers reflect no control character to a terminal.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { curl, curlParallel } from '../support/curl.js';
import { expectContract } from '../support/contract.js';
import { startFakeDns, type FakeDns } from '../support/fake-dns.js';
import { startKnot, type Knot } from '../support/knot.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';

const available = requireCommands('?ip= lookups', ['curl', 'knotd', 'knotc'], 'curl knot');

const at = (server: TestServer, path: string) => `http://127.0.0.1:${String(server.port)}${path}`;
const from = (caller: string) => ['-H', `X-Forwarded-For: ${caller}`];

describe.skipIf(!available)('?ip= lookups of another address', () => {
  let knot: Knot;
  let fake: FakeDns;
  let strict: TestServer;
  let withKnot: TestServer;
  let optedIn: TestServer;
  let againstFake: TestServer;

  beforeAll(async () => {
    knot = await startKnot();
    fake = await startFakeDns('dead-zone');
    const common = { NETDIAG_TRUST_PROXY: 'loopback' };
    const knotUpstream = `udp://127.0.0.1:${String(knot.port)}`;
    strict = await startTestServer({ ...common, NETDIAG_DNS_UPSTREAM: knotUpstream, NETDIAG_RATE_LIMITS: 'ip=1000,dns=2' });
    withKnot = await startTestServer({ ...common, NETDIAG_DNS_UPSTREAM: knotUpstream });
    optedIn = await startTestServer({ ...common, NETDIAG_DNS_UPSTREAM: knotUpstream, NETDIAG_IP_PARAM_SPECIAL_PTR: 'on' });
    againstFake = await startTestServer({ ...common, NETDIAG_DNS_UPSTREAM: `udp://127.0.0.1:${String(fake.port)}` });
  });
  afterAll(async () => {
    await Promise.all([strict.close(), withKnot.close(), optedIn.close(), againstFake.close()]);
    await Promise.all([knot.close(), fake.close()]);
  });

  it('a PTR asked for another address counts against the dns limit as well as ip; answers that ask none do not', async () => {
    const ask = (path: string) => curl(at(strict, path), from('9.9.9.9'));
    expect((await ask('/hostname?ip=8.8.8.8')).text).toBe('dns.google\n');
    const json = await ask('/json?ip=8.8.8.8');
    expect([json.status, (json.body as { hostname: string }).hostname]).toEqual([200, 'dns.google']);
    expect(json.headers.get('ratelimit-limit')).toBe('2');
    expect(json.headers.get('ratelimit-remaining')).toBe('0');
    const over = await ask('/hostname?ip=8.8.8.8');
    expect(over.status).toBe(429);
    expectContract('GET', '/hostname', over);
    expect(over.text).toMatch(/^Rate limit exceeded: More than 2 dns requests from this source in one minute; retry after [0-9]+ s\.\n$/);
    expect((await ask('/?ip=8.8.8.8')).status).toBe(200);
    expect((await ask('/country-iso?ip=8.8.8.8')).status).toBe(200);
    // The caller's own reverse name is the ip limit's alone.
    expect((await curl(at(strict, '/hostname'), from('8.8.8.8'))).text).toBe('dns.google\n');
    expect((await ask('/json?ip=8.8.4.4')).status).toBe(429);
  });

  it("a special-use address's PTR is not asked for unless the operator opts in", async () => {
    // 192.0.2.10 (documentation space) has a PTR in Knot: www.example.test.
    expect((await curl(at(withKnot, '/hostname?ip=192.0.2.10'), from('9.9.9.9'))).text).toBe('\n');
    expect(((await curl(at(withKnot, '/json?ip=192.0.2.10'), from('9.9.9.9'))).body as { hostname: unknown }).hostname).toBeNull();
    expect((await curl(at(optedIn, '/hostname?ip=192.0.2.10'), from('9.9.9.9'))).text).toBe('www.example.test\n');
    // No query left the server at all: the FAKE upstream counts them.
    const before = fake.queries();
    for (const special of ['10.1.2.3', '127.0.0.1', '192.168.1.1', 'fd00::1', '198.51.100.7']) {
      expect((await curl(at(againstFake, `/hostname?ip=${special}`), from('9.9.9.9'))).text).toBe('\n');
    }
    expect(fake.queries()).toBe(before);
    // A global address is asked, as before.
    await curl(at(againstFake, '/hostname?ip=8.8.8.8'), from('9.9.9.9'));
    expect(fake.queries()).toBeGreaterThan(before);
  });

  it("another address's PTR comes from the resolver's cache once asked (the answer itself stays no-store)", async () => {
    const own = await startKnot();
    const server = await startTestServer({ NETDIAG_TRUST_PROXY: 'loopback', NETDIAG_DNS_UPSTREAM: `udp://127.0.0.1:${String(own.port)}` });
    try {
      const first = await curl(at(server, '/hostname?ip=8.8.8.8'), from('9.9.9.9'));
      expect([first.text, first.headers.get('cache-control')]).toEqual(['dns.google\n', 'no-store']);
      await own.close();
      // The upstream is gone: only the cache can answer now, and the caller's own PTR, never cached, cannot.
      expect((await curl(at(server, '/hostname?ip=8.8.8.8'), from('1.1.1.1'))).text).toBe('dns.google\n');
      expect((await curl(at(server, '/hostname'), from('8.8.8.8'))).text).toBe('\n');
    } finally {
      await server.close();
    }
  });

  it('360 concurrent ?ip= lookups from three sources leave a caller with a PTR its reverse name', async () => {
    const lookups = Array.from({ length: 360 }, (_, n) => ({ url: at(withKnot, `/json?ip=198.51.100.${String(n % 250)}`), args: from(`9.9.9.${String(n % 3)}`) }));
    const burst = curlParallel(lookups);
    const mine = await curl(at(withKnot, '/hostname'), from('8.8.8.8'));
    const statuses = await burst;
    expect(mine.text).toBe('dns.google\n');
    // Every lookup answered: looked up, or refused by the per-source limit (three sources, 120 each).
    expect(statuses).toHaveLength(360);
    expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(0);
  });

  it('a text problem shows the control characters a client sent as escapes, never acts on them', async () => {
    const res = await curl(at(withKnot, '/ip?ip=%1b%5b31mRED%1b%5b0m%07%0d%0aX%c2%9b%e2%80%ae'), from('9.9.9.9'));
    expect(res.status).toBe(400);
    expect(res.text).toBe('Invalid parameter: The query parameter "ip" must be an IPv4 address (four dotted parts) or an IPv6 address; got "\\x1b[31mRED\\x1b[0m\\x07\\r\\nX\\x9b\\u202e".\n');
    const json = await curl(at(withKnot, '/ip?ip=%1b%07'), [...from('9.9.9.9'), '-H', 'Accept: application/json']);
    expect((json.body as { detail: string }).detail).toContain('got "\u001b\u0007"');
  });
});
