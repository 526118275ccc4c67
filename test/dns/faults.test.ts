// Upstream faults (fake servers in test/support/fake-dns.ts), DoH against the real Knot, and
// every 400 the DNS route gives.
import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import dnsPacket from 'dns-packet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/runtime/node/adapter/config.js';
import { nodeResolver } from '../../src/runtime/node/ports/dns-transport/transports.js';
import { SYSTEM_CLOCK as systemClock } from '../../src/core/ports/clock.js';
import { expectContract } from '../support/contract.js';
import { startDohRelay, type DohRelay } from '../support/doh-relay.js';
import { startFakeDns, type Fault } from '../support/fake-dns.js';
import { send } from '../support/http.js';
import { startKnot, type Knot } from '../support/knot.js';
import { serveCli } from '../support/process.js';
import { startTestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';

const DEADLINE_MS = 400;

async function resolveVia(upstream: string, name: string, type: string, env: Record<string, string> = {}) {
  const server = await startTestServer({ NETDIAG_DNS_UPSTREAM: upstream, NETDIAG_DNS_TIMEOUT_MS: String(DEADLINE_MS), ...env });
  try {
    const started = Date.now();
    const res = await send(`${server.url}/v1/dns/resolve?${new URLSearchParams({ name, type }).toString()}`);
    expectContract('GET', '/v1/dns/resolve', res);
    return { ...res, elapsed: Date.now() - started, code: (res.body as { code?: string }).code };
  } finally {
    await server.close();
  }
}

async function withFake<T>(fault: Fault, fn: (port: number) => Promise<T>): Promise<T> {
  const fake = await startFakeDns(fault);
  try {
    return await fn(fake.port);
  } finally {
    await fake.close();
  }
}

// Both ways of using UDP sockets (NETDIAG_DNS_UDP_SOCKETS) meet every fault the same way.
describe.each(['shared', 'per-query'])('upstream faults, UDP sockets %s', (sockets) => {
  const env = { NETDIAG_DNS_UDP_SOCKETS: sockets };

  it('a silent upstream gives 504 within the deadline', async () => {
    const res = await withFake('silent', (port) => resolveVia(`udp://127.0.0.1:${port}`, 'a.example', 'A', env));
    expect(res.status).toBe(504);
    expect(res.code).toBe('upstream_timeout');
    expect(res.elapsed).toBeGreaterThanOrEqual(DEADLINE_MS - 20);
    // The configured deadline, not the default one (which is five times as long): a bound from
    // the configuration, wide of how long one loopback request takes on a loaded machine.
    expect(res.elapsed).toBeLessThan(loadConfig({}).dnsTimeoutMs);
  });

  it('garbage gives 502 upstream_invalid_response', async () => {
    const res = await withFake('garbage', (port) => resolveVia(`udp://127.0.0.1:${port}`, 'a.example', 'A', env));
    expect(res.status).toBe(502);
    expect(res.code).toBe('upstream_invalid_response');
  });

  it('a reply to another question gives 502', async () => {
    const res = await withFake('question-mismatch', (port) => resolveVia(`udp://127.0.0.1:${port}`, 'a.example', 'A', env));
    expect(res.status).toBe(502);
    expect(res.code).toBe('upstream_invalid_response');
    expect(JSON.stringify(res.body)).not.toContain('elsewhere');
  });

  it('ignores a reply with the wrong ID and takes the right one that follows', async () => {
    const res = await withFake('wrong-id-then-right', (port) => resolveVia(`udp://127.0.0.1:${port}`, 'a.example', 'A', env));
    expect(res.status).toBe(200);
    const answers = (res.body as { data: { answers: { address: string }[] } }).data.answers;
    expect(answers.map((a) => a.address)).toEqual(['192.0.2.99']);
  });

  it('retries a truncated UDP reply over TCP and answers in full', async () => {
    const res = await withFake('truncated-then-tcp', (port) => resolveVia(`udp://127.0.0.1:${port}`, 'a.example', 'A', env));
    expect(res.status).toBe(200);
    const answers = (res.body as { data: { answers: { address: string }[] } }).data.answers;
    expect(answers.map((a) => a.address)).toEqual(['192.0.2.77']);
  });

  it('nothing listening gives 503 upstream_unavailable, over UDP and TCP', async () => {
    // Port 9 (discard) is closed on loopback here; UDP learns it from ICMP, TCP from a reset.
    for (const upstream of ['udp://127.0.0.1:9', 'tcp://127.0.0.1:9']) {
      const res = await resolveVia(upstream, 'a.example', 'A', upstream.startsWith('udp') ? env : {});
      expect(res.status, upstream).toBe(503);
      expect(res.code).toBe('upstream_unavailable');
    }
  });
});

const haveKnot = requireCommands('DoH suite', ['knotd', 'knotc', 'openssl'], 'knot openssl');

describe.skipIf(!haveKnot)('DNS over HTTPS upstream', () => {
  let knot: Knot;
  let doh: DohRelay;
  beforeAll(async () => {
    knot = await startKnot();
    doh = await startDohRelay(knot.port);
  });
  afterAll(async () => {
    await doh.close();
    await knot.close();
  });

  it('netdiag serve with an https:// upstream gives the same answers as over UDP and TCP', async () => {
    const answersVia = async (upstream: string, extraEnv: Record<string, string> = {}) => {
      const s = await serveCli({ NETDIAG_DNS_UPSTREAM: upstream, ...extraEnv });
      try {
        const out: unknown[] = [];
        for (const [name, type] of [['www.example.test', 'A'], ['example.test', 'MX'], ['alias.example.test', 'A'], ['nope.example.test', 'A']]) {
          const res = await send(`http://127.0.0.1:${s.port}/v1/dns/resolve?name=${name}&type=${type}`);
          expect(res.status).toBe(200);
          out.push((res.body as { data: unknown }).data);
        }
        return out;
      } finally {
        s.child.kill('SIGTERM');
        await s.exited;
      }
    };
    const viaUdp = await answersVia(`udp://127.0.0.1:${knot.port}`);
    const viaTcp = await answersVia(`tcp://127.0.0.1:${knot.port}`);
    // The service trusts the relay's self-signed certificate the way an operator would: NODE_EXTRA_CA_CERTS.
    const viaDoh = await answersVia(doh.url, { NODE_EXTRA_CA_CERTS: doh.caFile });
    expect(viaTcp).toEqual(viaUdp);
    expect(viaDoh).toEqual(viaUdp);
  });
});

describe('bad parameters are 400 invalid_parameter', () => {
  let server: Awaited<ReturnType<typeof startTestServer>>;
  beforeAll(async () => {
    // The upstream is never asked: validation happens first.
    server = await startTestServer({ NETDIAG_DNS_UPSTREAM: 'udp://127.0.0.1:9' });
  });
  afterAll(() => server.close());

  const long = (n: number) => Array.from({ length: Math.ceil(n / 10) }, () => 'abcdefghi').join('.').slice(0, n);

  it.each([
    ['missing name', 'type=A', /"name" is required/],
    ['missing type', 'name=example.com', /"type" is required/],
    ['no parameters', '', /is required/],
    ['empty name', 'name=&type=A', /1 to 253/],
    ['empty type', 'name=example.com&type=', /type must be one of/],
    ['repeated name', 'name=a.example&name=b.example&type=A', /"name" must be given once/],
    ['repeated type', 'name=a.example&type=A&type=AAAA', /"type" must be given once/],
    ['lower-case type', 'name=example.com&type=a', /type must be one of/],
    ['a malformed percent-encoding', 'name=%E0%A4%A&type=A', /malformed percent-encoding/],
    ['a repeated name in another spelling', 'name=a.example&%6Eame=b.example&type=A', /"name" must be given once/],
    ['type outside the allowlist', 'name=example.com&type=SOA', /type must be one of/],
    ['254 characters', `name=${long(254)}&type=A`, /1 to 253/],
    ['253 characters plus a trailing dot', `name=${long(253)}.&type=A`, /1 to 253/],
    ['a label of 64 octets', `name=${'a'.repeat(64)}.example&type=A`, /at most 63/],
    ['an empty label', 'name=a..example&type=A', /empty label/],
    ['a leading dot', 'name=.example&type=A', /empty label/],
    ['a space', 'name=exa%20mple.com&type=A', /letters, digits, hyphen and underscore/],
    ['a slash', 'name=example.com%2Fx&type=A', /letters, digits, hyphen and underscore/],
    ['a root-only name', 'name=.&type=A', /at least one label/],
    ['an IDN that grows past 253 in A-labels', `name=${Array.from({ length: 30 }, () => 'ü'.repeat(7)).join('.')}&type=A`, /A-label form/],
    ['a PTR name that is not an address', 'name=example.com&type=PTR', /IPv4 or IPv6 address/],
    ['a short IPv4 form for PTR', 'name=127.1&type=PTR', /IPv4 or IPv6 address/],
    ['a zone-indexed IPv6 address for PTR', 'name=fe80::1%25eth0&type=PTR', /zone index/],
  ])('%s', async (_label, query, detail) => {
    const res = await send(`${server.url}/v1/dns/resolve?${query}`);
    expect(res.status).toBe(400);
    const problem = res.body as { code: string; detail: string };
    expect(problem.code).toBe('invalid_parameter');
    expect(problem.detail).toMatch(detail);
    expectContract('GET', '/v1/dns/resolve', res);
  });

  it('253 characters are accepted as a name (and reach the upstream)', async () => {
    const res = await send(`${server.url}/v1/dns/resolve?name=${long(253)}&type=A`);
    expect(res.status).toBe(503);
  });
});

describe('what each UDP query carries', () => {
  it('per-query sockets: a fresh source port and ID per query, EDNS(0) at 1232 bytes, and never a Client Subnet option', async () => {
    // A recording peer: answers every query and keeps the port it came from and its OPT record.
    const seen: { port: number; id: number; payload: number | undefined; options: number[] }[] = [];
    const peer = createSocket('udp4');
    peer.on('message', (message, rinfo) => {
      const query = dnsPacket.decode(message);
      const opt = query.additionals?.find((r) => r.type === 'OPT') as { udpPayloadSize?: number; options?: { code: number }[] } | undefined;
      seen.push({ port: rinfo.port, id: query.id ?? -1, payload: opt?.udpPayloadSize, options: (opt?.options ?? []).map((o) => o.code) });
      const question = query.questions?.[0] ?? { type: 'A' as const, name: 'x' };
      peer.send(dnsPacket.encode({ type: 'response', id: query.id, flags: dnsPacket.RECURSION_AVAILABLE, questions: [question], answers: [] }), rinfo.port, rinfo.address);
    });
    peer.bind(0, '127.0.0.1');
    await once(peer, 'listening');
    try {
      const resolver = nodeResolver(loadConfig({ NETDIAG_DNS_UPSTREAM: `udp://127.0.0.1:${String(peer.address().port)}`, NETDIAG_DNS_UDP_SOCKETS: 'per-query' }), systemClock);
      for (let i = 0; i < 20; i++) await resolver.resolveUncached(`q${String(i)}.example`, 'A', 1000);
      expect(seen).toHaveLength(20);
      // Random 16-bit values may meet by chance; a reused socket or a counter would not spread like this.
      expect(new Set(seen.map((s) => s.port)).size).toBeGreaterThanOrEqual(18);
      expect(new Set(seen.map((s) => s.id)).size).toBeGreaterThanOrEqual(18);
      for (const query of seen) {
        expect(query.payload).toBe(1232);
        expect(query.options).not.toContain(8); // EDNS Client Subnet, RFC 7871 §6
      }
    } finally {
      peer.close();
    }
  });
});
