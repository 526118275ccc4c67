// What keeps DNS bounded against large answers and failing upstreams: the cache's byte bound
// and entry size (real Knot), the cap on lookups in flight and the circuit breaker (a fake
// silent upstream, then real Knot on the same port), the cause of failures in the log, and the
// transport faults that map to 503 or 502 (a TCP peer that hangs up, a DoH server that redirects).
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createTcpServer } from 'node:net';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dohTransport } from '../../src/engines/dns/doh.js';
import { encodeQuery } from '../../src/engines/dns/wire.js';
import { loadConfig } from '../../src/runtime/node/adapter/config.js';
import { nodeResolver } from '../../src/runtime/node/ports/dns-transport/transports.js';
import { SYSTEM_CLOCK as systemClock } from '../../src/core/ports/clock.js';
import { selfSignedCertificate } from '../support/doh-relay.js';
import { startFakeDns } from '../support/fake-dns.js';
import { send } from '../support/http.js';
import { startKnot, type Knot } from '../support/knot.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { memoryLogger } from '../support/services.js';
import { requireCommands } from '../support/system.js';
import { eventually } from '../support/wait.js';
import { Deadline, DnsFailure } from '../../src/core/ports/dns-transport.js';

const haveKnot = requireCommands('DNS bounds suite', ['knotd', 'knotc', 'openssl'], 'knot openssl');
const codeOf = (res: { body: unknown }) => (res.body as { code?: string }).code;
const resolveUrl = (server: TestServer, name: string, type = 'A') => `${server.url}/v1/dns/resolve?name=${name}&type=${type}`;

describe.skipIf(!haveKnot)('the DNS cache under large answers (Knot)', () => {
  let knot: Knot;
  beforeAll(async () => {
    knot = await startKnot();
  });
  afterAll(() => knot.close());

  it('stays under its byte bound, evicting the least recently used, while every answer is served', async () => {
    const config = loadConfig({ NETDIAG_DNS_UPSTREAM: `udp://127.0.0.1:${String(knot.port)}`, NETDIAG_DNS_CACHE_BYTES: '40000', NETDIAG_DNS_CACHE_MAX_ENTRY_BYTES: '20000' });
    const resolver = nodeResolver(config, systemClock);
    let peak = 0;
    for (let i = 1; i <= 40; i++) {
      const { result } = await resolver.resolve(`big${String(i)}.example.test`, 'TXT');
      expect(result.answers).toHaveLength(2);
      expect(result.answers[0]?.type === 'TXT' && result.answers[0].value.length).toBeGreaterThanOrEqual(1999);
      peak = Math.max(peak, resolver.cache.bytes);
    }
    // About 8 KiB each by the estimate: four or five fit, the other 35 were evicted.
    expect(peak).toBeLessThanOrEqual(40_000);
    expect(peak).toBeGreaterThan(20_000);
    expect(resolver.cache.size).toBeGreaterThan(1);
    expect(resolver.cache.size).toBeLessThan(10);
    // The newest is still there (served without asking), the oldest is not.
    const before = knot.queries();
    await resolver.resolve('big40.example.test', 'TXT');
    expect(knot.queries()).toBe(before);
    await resolver.resolve('big1.example.test', 'TXT');
    expect(knot.queries()).toBeGreaterThan(before);
  });

  it('serves an answer over the maximum entry size but never caches it', async () => {
    const config = loadConfig({ NETDIAG_DNS_UPSTREAM: `udp://127.0.0.1:${String(knot.port)}`, NETDIAG_DNS_CACHE_MAX_ENTRY_BYTES: '20000' });
    const resolver = nodeResolver(config, systemClock);
    const before = knot.queries();
    for (let i = 0; i < 2; i++) {
      const { result } = await resolver.resolve('huge.example.test', 'TXT');
      expect(result.answers).toHaveLength(20);
    }
    expect(resolver.cache.size).toBe(0);
    expect(resolver.cache.bytes).toBe(0);
    // Each lookup asked (over UDP, then TCP for the truncated reply).
    expect(knot.queries() - before).toBe(4);
  });
});

describe('the cap on lookups in flight', () => {
  it('past NETDIAG_DNS_MAX_OUTSTANDING a lookup is 503 at once and no query is sent', async () => {
    const fake = await startFakeDns('silent');
    const server = await startTestServer({ NETDIAG_DNS_UPSTREAM: `udp://127.0.0.1:${String(fake.port)}`, NETDIAG_DNS_TIMEOUT_MS: '1500', NETDIAG_DNS_MAX_OUTSTANDING: '3', NETDIAG_RATE_LIMITS: 'dns=1000' });
    try {
      const held = [1, 2, 3].map((i) => send(resolveUrl(server, `held${String(i)}.example`)));
      expect(await eventually(() => fake.queries() === 3, 1_000)).toBe(true);
      const started = Date.now();
      const refused = await send(resolveUrl(server, 'one-more.example'));
      // At once: not after the 1.5 s deadline it would wait on the silent upstream.
      expect(Date.now() - started).toBeLessThan(1_500);
      expect(refused.status).toBe(503);
      expect(codeOf(refused)).toBe('upstream_unavailable');
      expect((refused.body as { detail: string }).detail).toMatch(/too many lookups/);
      expect(fake.queries()).toBe(3);
      // The held ones time out as usual, and then there is room again.
      expect((await Promise.all(held)).map((r) => r.status)).toEqual([504, 504, 504]);
      // (Their timeouts also asked the health question once: count from here.)
      const before = fake.queries();
      await send(resolveUrl(server, 'later.example'));
      expect(fake.queries()).toBe(before + 1);
    } finally {
      await server.close();
      await fake.close();
    }
  });
});

describe("callers' PTRs have a share of their own", () => {
  // Issue 37: requests to /v1/ip from many /64s, each under its limit, for addresses whose
  // reverse zone never answers, held every slot of the cap for the PTR deadline, and
  // /v1/dns/resolve from other callers answered 503 "too many lookups are in flight".
  it('PTRs of dead reverse zones take at most a quarter of NETDIAG_DNS_MAX_OUTSTANDING; past it reverse_hostname is null unasked and the DNS route is still served', async () => {
    const fake = await startFakeDns('dead-zone');
    const server = await startTestServer({
      NETDIAG_DNS_UPSTREAM: `udp://127.0.0.1:${String(fake.port)}`,
      NETDIAG_DNS_TIMEOUT_MS: '5000',
      NETDIAG_DNS_MAX_OUTSTANDING: '8',
      NETDIAG_TRUST_PROXY: 'loopback',
      NETDIAG_RATE_LIMITS: 'dns=1000,ip=1000',
      NETDIAG_METRICS_PORT: '0',
    });
    try {
      let settled = 0;
      // Twelve callers, each its own /64 behind the trusted proxy: more than the whole cap.
      const callers = Array.from({ length: 12 }, (_, i) =>
        send(`${server.url}/v1/ip`, { headers: { 'X-Forwarded-For': `2001:db8:${(i + 1).toString(16)}::1` } }).finally(() => {
          settled += 1;
        }),
      );
      // Every caller either asked its PTR (held by the dead zone) or was answered without asking.
      expect(await eventually(() => fake.queries() + settled >= 12, 2_000, 5)).toBe(true);
      const other = await send(resolveUrl(server, 'innocent.example'));
      expect(other.status).toBe(200);
      // The share of 8 is 2: two asked, ten answered at once (and the one other name).
      expect(fake.queries()).toBe(3);
      const replies = await Promise.all(callers);
      expect(replies.map((r) => r.status)).toEqual(Array.from({ length: 12 }, () => 200));
      expect(new Set(replies.map((r) => (r.body as { data: { reverse_hostname: unknown } }).data.reverse_hostname))).toEqual(new Set([null]));
      // The ten not asked are counted apart from the upstream's own outcomes.
      const metrics = await (await fetch(`http://127.0.0.1:${String(server.running.metricsPort)}/metrics`)).text();
      expect(metrics).toContain('netdiag_dns_upstream_lookups_total{outcome="ptr_budget"} 10');
    } finally {
      await server.close();
      await fake.close();
    }
  });
});

describe.skipIf(!haveKnot)('the circuit breaker', () => {
  it('opens when the upstream falls silent (503 at once, logged once), then closes when Knot answers on the same port', async () => {
    const fake = await startFakeDns('silent');
    const port = fake.port;
    const server = await startTestServer({ NETDIAG_DNS_UPSTREAM: `udp://127.0.0.1:${String(port)}`, NETDIAG_DNS_TIMEOUT_MS: '200', NETDIAG_RATE_LIMITS: 'dns=1000', NETDIAG_LOG_LEVEL: 'debug' });
    let knot: Knot | undefined;
    try {
      const opened = () => server.logs().filter((l) => typeof l.msg === 'string' && l.msg.startsWith('DNS upstream failing'));
      const closed = () => server.logs().filter((l) => typeof l.msg === 'string' && l.msg.startsWith('DNS upstream answering again'));
      // The first timeout asks the health question; its going unanswered too opens the circuit.
      // Lookups asked meanwhile wait out their deadline (504); none after the opening does.
      const statuses: number[] = [];
      for (let i = 0; i < 10 && !statuses.includes(503); i++) statuses.push((await send(resolveUrl(server, `t${String(i)}.example`))).status);
      expect(statuses.at(-1)).toBe(503);
      expect(new Set(statuses.slice(0, -1))).toEqual(new Set([504]));
      expect(opened()).toHaveLength(1);
      expect(opened()[0]).toMatchObject({ level: 'warn', reason: 'deadline', health_check: 'unanswered' });

      const asked = fake.queries();
      // Refused without asking (the count below), so without waiting the 200 ms deadline.
      const fast = await send(resolveUrl(server, 'while-open.example'));
      expect(fast.status).toBe(503);
      expect(codeOf(fast)).toBe('upstream_unavailable');
      expect(fake.queries()).toBe(asked);

      await fake.close();
      knot = await startKnot(port);
      expect(await eventually(() => closed().length === 1, 8_000, 50)).toBe(true);
      expect(closed()[0]).toMatchObject({ level: 'info', last_reason: 'deadline' });
      const ok = await send(resolveUrl(server, 'www.example.test'));
      expect(ok.status).toBe(200);
      expect(opened()).toHaveLength(1);
    } finally {
      await server.close();
      await knot?.close();
    }
  });

  it('names the cause when the upstream refuses: ECONNREFUSED, not silence', async () => {
    const logger = memoryLogger();
    // Port 9 (discard) has no listener on loopback: the kernel answers ICMP port unreachable.
    const resolver = nodeResolver(loadConfig({ NETDIAG_DNS_UPSTREAM: 'udp://127.0.0.1:9', NETDIAG_DNS_TIMEOUT_MS: '500' }), systemClock, logger);
    try {
      for (let i = 0; i < 5; i++) await expect(resolver.resolve(`r${String(i)}.example`, 'A')).rejects.toMatchObject({ kind: 'unavailable' });
      const warn = logger.entries.find((e) => e.level === 'warn');
      expect(warn?.obj).toMatchObject({ reason: 'ECONNREFUSED' });
      expect(resolver.circuit.isOpen).toBe(true);
    } finally {
      await resolver.close();
    }
  });

  // Anyone can own a zone whose servers never answer: lookups of its names, or /v1/ip from
  // addresses whose reverse zone is dead, time out however healthy the upstream is. They must not
  // open the circuit for every other caller (before, five such timeouts did).
  it.each([
    ['/v1/dns/resolve of names in a dead zone', '1000'],
    ['/v1/ip from callers whose reverse zone is dead, with the PTR deadline at the lookup timeout', '500'],
  ])('%s cannot open the circuit for other callers', async (what, timeoutMs) => {
    const fake = await startFakeDns('dead-zone');
    const server = await startTestServer({
      NETDIAG_DNS_UPSTREAM: `udp://127.0.0.1:${String(fake.port)}`,
      NETDIAG_DNS_TIMEOUT_MS: timeoutMs,
      NETDIAG_TRUST_PROXY: 'loopback',
      NETDIAG_RATE_LIMITS: 'dns=1000,ip=1000',
    });
    try {
      const attack = (i: number) =>
        what.startsWith('/v1/ip')
          ? send(`${server.url}/v1/ip`, { headers: { 'X-Forwarded-For': `203.0.113.${String(i)}` } })
          : send(resolveUrl(server, `n${String(i)}.dead.example`));
      // Three waves of ten at once, each wave waiting out the deadline, beside another caller.
      for (let wave = 0; wave < 3; wave++) {
        const waveReplies = await Promise.all([...Array.from({ length: 10 }, (_, i) => attack(wave * 10 + i)), send(resolveUrl(server, `innocent${String(wave)}.example`))]);
        expect(waveReplies.at(-1)?.status).toBe(200);
        if (!what.startsWith('/v1/ip')) expect(new Set(waveReplies.slice(0, -1).map((r) => r.status))).toEqual(new Set([504]));
      }
      expect(server.logs().some((l) => typeof l.msg === 'string' && l.msg.startsWith('DNS upstream failing'))).toBe(false);
      // A name asked now, on a cache miss, still goes upstream and is answered.
      expect((await send(resolveUrl(server, 'after.example'))).status).toBe(200);
    } finally {
      await server.close();
      await fake.close();
    }
  });

  it('the health question asked after a timeout is answered: the circuit stays closed even with no other traffic', async () => {
    const fake = await startFakeDns('dead-zone');
    const resolver = nodeResolver(loadConfig({ NETDIAG_DNS_UPSTREAM: `udp://127.0.0.1:${String(fake.port)}`, NETDIAG_DNS_TIMEOUT_MS: '300' }), systemClock);
    try {
      for (let i = 0; i < 8; i++) await expect(resolver.resolve(`s${String(i)}.dead.example`, 'A')).rejects.toMatchObject({ kind: 'timeout' });
      expect(resolver.circuit.isOpen).toBe(false);
      expect(resolver.circuit.admits()).toBe(true);
    } finally {
      await resolver.close();
      await fake.close();
    }
  });
});

describe('transport faults', () => {
  it('a TCP resolver that closes the connection before a whole reply is 503, not 502', async () => {
    const server = createTcpServer((socket) => {
      socket.once('data', () => socket.end(Buffer.from([0x00, 0x40, 0x12])));
      socket.on('error', () => undefined);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const port = (server.address() as { port: number }).port;
    const service = await startTestServer({ NETDIAG_DNS_UPSTREAM: `tcp://127.0.0.1:${String(port)}` });
    try {
      const res = await send(resolveUrl(service, 'a.example'));
      expect(res.status).toBe(503);
      expect(codeOf(res)).toBe('upstream_unavailable');
    } finally {
      await service.close();
      server.close();
    }
  });

  it.skipIf(!haveKnot)('a DoH server that redirects is not followed: 502 naming the status', async () => {
    const cert = selfSignedCertificate();
    const tls = { cert: readFileSync(cert.certFile), key: readFileSync(cert.keyFile) };
    let followed = 0;
    const elsewhere = createHttpsServer(tls, (_req, res) => {
      followed += 1;
      res.writeHead(200, { 'Content-Type': 'application/dns-message' }).end();
    });
    elsewhere.listen(0, '127.0.0.1');
    await once(elsewhere, 'listening');
    const target = `https://127.0.0.1:${String((elsewhere.address() as { port: number }).port)}/dns-query`;
    const redirecting = createHttpsServer(tls, (req, res) => {
      req.resume();
      res.writeHead(307, { Location: target }).end();
    });
    redirecting.listen(0, '127.0.0.1');
    await once(redirecting, 'listening');
    const dispatcher = new Agent({ connect: { ca: tls.cert } });
    const viaAgent = ((input: string, init: RequestInit) => undiciFetch(input, { ...(init as object), dispatcher })) as unknown as typeof fetch;
    try {
      const transport = dohTransport(`https://127.0.0.1:${String((redirecting.address() as { port: number }).port)}/dns-query`, viaAgent);
      const failure = await transport.exchange(encodeQuery('a.example', 'A'), new Deadline(2_000)).catch((err: unknown) => err);
      expect(failure).toBeInstanceOf(DnsFailure);
      expect(failure).toMatchObject({ kind: 'invalid', message: 'HTTP status 307' });
      expect(followed).toBe(0);
    } finally {
      await dispatcher.close();
      redirecting.close();
      elsewhere.close();
    }
  });
});
