// The contract in-process: every path and method the OpenAPI document gives, driven through the
// core's fetch-style entry (`createApp(...).fetch`, which both runtimes wrap) with in-memory ports
// (test/support/services.ts) and FAKES for what a socket would bring: a DNS upstream answering
// from a table, a probe answering at once, geo lookups with one known network. Each answer,
// success and failure, is validated against the document (status listed, body and headers to
// their schemas), and every documented operation is reached at least once. No root, no system
// package, no socket: it runs anywhere, first in `npm test` and alone as `npm run test:contract`.
import dnsPacket from 'dns-packet';
import { describe, expect, it } from 'vitest';
import { createApp } from '../src/app/app.js';
import { DnsCache } from '../src/engines/dns/cache.js';
import { createResolver } from '../src/engines/dns/resolver.js';
import type { DnsTransport } from '../src/core/ports/dns-transport.js';
import type { LatencyProbes } from '../src/core/ports/probe-client.js';
import { expectContract, openapi, type Observed } from './support/contract.js';
import { loopback, testServices } from './support/services.js';
import { ManualClock } from '../src/core/ports/clock.conformance.js';

/** A FAKE upstream: answers A and MX for example.test from a table, NXDOMAIN for anything else. */
const fakeUpstream: DnsTransport = {
  exchange: (query) => {
    const question = dnsPacket.decode(Buffer.from(query));
    const q = question.questions?.[0];
    const known = q?.name === 'example.test';
    const answers: dnsPacket.Answer[] = !known ? [] : q.type === 'A' ? [{ type: 'A', name: 'example.test', ttl: 300, class: 'IN', data: '192.0.2.10' }] : q.type === 'MX' ? [{ type: 'MX', name: 'example.test', ttl: 300, class: 'IN', data: { preference: 10, exchange: 'mail.example.test' } }] : [];
    return Promise.resolve(
      new Uint8Array(dnsPacket.encode({ type: 'response', id: question.id ?? 0, flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | (known ? 0 : 3), questions: question.questions ?? [], answers })),
    );
  },
};

/** A FAKE probe for weur, answering at once. */
const fakeProbes: LatencyProbes = { regions: new Set(['weur']), measure: () => Promise.resolve(12.5) };

function app() {
  const clock = new ManualClock();
  return createApp(
    testServices({
      clock,
      dns: createResolver({ transport: fakeUpstream, timeoutMs: 1000, cache: new DnsCache(100, clock), clock }),
      probes: fakeProbes,
      geo: { city: { city: () => ({ city: 'Example City', region: 'Example Region', country_code: 'DE', postal_code: null, timezone: 'Europe/Berlin', latitude: 52.5, longitude: 13.4 }) }, asn: { asn: () => ({ asn: 64500, organization: 'Example Networks' }) } },
      turn: { url: 'turn:turn.example.test:3478', secret: 'a secret of enough length for the test', ttlSeconds: 600 },
      families: { ipv4: 'https://ipv4.example.test', ipv6: 'https://ipv6.example.test' },
      servers: [{ name: 'fra', url: 'https://fra.example.test', location: 'Frankfurt, DE', families: ['ipv4', 'ipv6'] }],
    }),
  );
}

interface Case {
  method: 'GET' | 'POST' | 'OPTIONS' | 'HEAD';
  template: string;
  path: string;
  status: number;
  headers?: Record<string, string>;
  body?: string;
  /** A public caller (the text answers read its network and location). */
  caller?: string;
  /** A body too large to read whole (the responsiveness test's 8 GiB object): its first megabyte is read, then the rest cancelled. */
  endless?: true;
}

const json = { 'Content-Type': 'application/json' };
const event = JSON.stringify({ event: 'speed_test_completed', event_id: '3b241101-e2bb-4255-8caf-4136c566a962', properties: { source: 'cli', mode: 'full', download_mbps: 412.5 } });

const CASES: readonly Case[] = [
  { method: 'GET', template: '/v1/ip', path: '/v1/ip', status: 200, caller: '8.8.8.8' },
  { method: 'GET', template: '/v1/dns/resolve', path: '/v1/dns/resolve?name=example.test&type=MX', status: 200 },
  { method: 'GET', template: '/v1/dns/resolve', path: '/v1/dns/resolve?name=nowhere.test&type=A', status: 200 },
  { method: 'GET', template: '/v1/dns/resolve', path: '/v1/dns/resolve?name=example..test&type=A', status: 400 },
  { method: 'GET', template: '/v1/dns/resolve', path: '/v1/dns/resolve?name=example.test&type=SOA', status: 400 },
  { method: 'GET', template: '/v1/latency/regions', path: '/v1/latency/regions', status: 200 },
  { method: 'GET', template: '/v1/latency/regions/{region}/probe', path: '/v1/latency/regions/weur/probe', status: 200 },
  { method: 'GET', template: '/v1/latency/regions/{region}/probe', path: '/v1/latency/regions/enam/probe', status: 503 },
  { method: 'GET', template: '/v1/latency/regions/{region}/probe', path: '/v1/latency/regions/mars/probe', status: 400 },
  { method: 'GET', template: '/v1/speed-test/configuration', path: '/v1/speed-test/configuration', status: 200 },
  { method: 'GET', template: '/v1/speed-test/turn-credentials', path: '/v1/speed-test/turn-credentials', status: 200 },
  { method: 'POST', template: '/v1/events', path: '/v1/events', status: 202, headers: json, body: event },
  { method: 'POST', template: '/v1/events', path: '/v1/events', status: 400, headers: json, body: '{"event":"speed_test_completed"}' },
  { method: 'POST', template: '/v1/events', path: '/v1/events', status: 415, headers: { 'Content-Type': 'text/plain' }, body: event },
  { method: 'GET', template: '/v1/health', path: '/v1/health', status: 200 },
  { method: 'GET', template: '/v1/openapi.json', path: '/v1/openapi.json', status: 200 },
  { method: 'GET', template: '/v1/ip/families', path: '/v1/ip/families', status: 200 },
  { method: 'GET', template: '/v1/servers', path: '/v1/servers', status: 200 },
  { method: 'GET', template: '/', path: '/', status: 200, caller: '8.8.8.8' },
  { method: 'GET', template: '/', path: '/', status: 200, headers: { Accept: 'application/json' }, caller: '8.8.8.8' },
  { method: 'GET', template: '/', path: '/', status: 200, headers: { Accept: 'text/html' }, caller: '8.8.8.8' },
  ...['/ip', '/country', '/country-iso', '/city', '/region', '/asn', '/asn-org', '/coordinates', '/timezone', '/json'].map((path): Case => ({ method: 'GET', template: path, path, status: 200, caller: '8.8.8.8' })),
  // No reverse name in-process: an empty line for curl, as echoip answers; a 404 for JSON.
  { method: 'GET', template: '/hostname', path: '/hostname', status: 200, caller: '8.8.8.8' },
  { method: 'GET', template: '/hostname', path: '/hostname', status: 404, headers: { Accept: 'application/json' }, caller: '8.8.8.8' },
  // Another address by ?ip=, and a malformed one.
  { method: 'GET', template: '/json', path: '/json?ip=2001:4860:4860::8888', status: 200, caller: '8.8.8.8' },
  { method: 'GET', template: '/json', path: '/json?ip=2001:4860::8888::1', status: 400, caller: '8.8.8.8' },
  { method: 'GET', template: '/city', path: '/city?ip=10.0.0.300', status: 400, caller: '8.8.8.8' },
  { method: 'GET', template: '/', path: '/?ip=1.1.1.1', status: 200, headers: { Accept: 'application/json' }, caller: '8.8.8.8' },
  // The port check is off unless the operator turns it on.
  { method: 'GET', template: '/port/{port}', path: '/port/22', status: 404, caller: '8.8.8.8' },
  { method: 'GET', template: '/__down', path: '/__down?bytes=1000', status: 200 },
  { method: 'GET', template: '/__down', path: '/__down?bytes=lots', status: 400 },
  { method: 'POST', template: '/__up', path: '/__up', status: 200, headers: { 'Content-Type': 'application/octet-stream' }, body: 'x'.repeat(1000) },
  { method: 'GET', template: '/.well-known/nq', path: '/.well-known/nq', status: 200 },
  { method: 'GET', template: '/nq/small', path: '/nq/small', status: 200 },
  { method: 'GET', template: '/nq/large', path: '/nq/large', status: 200, endless: true },
  { method: 'POST', template: '/nq/upload', path: '/nq/upload', status: 200, headers: { 'Content-Type': 'application/octet-stream' }, body: 'x'.repeat(1000) },
  { method: 'POST', template: '/nq/upload', path: '/nq/upload', status: 413, headers: { 'Content-Length': String(8 * 1024 ** 3 + 1) } },
  { method: 'GET', template: '/problems/{code}', path: '/problems/rate_limit_exceeded', status: 200 },
  { method: 'GET', template: '/problems/{code}', path: '/problems/no_such_code', status: 404 },
  // Every path that answers preflights answers one (CORS).
  ...Object.entries(openapi.paths)
    .filter(([, operations]) => 'options' in operations)
    .map(([template]): Case => ({ method: 'OPTIONS', template, path: template.replace('{region}', 'weur').replace('{code}', 'rate_limit_exceeded').replace('{port}', '22'), status: 204, headers: { Origin: 'https://elsewhere.example', 'Access-Control-Request-Method': 'GET' } })),
];

async function observe(res: Response, endless = false): Promise<Observed> {
  if (endless) {
    const reader = res.body?.getReader();
    for (let read = 0; reader !== undefined && read < 1_000_000; ) read += (await reader.read()).value?.byteLength ?? 0;
    await reader?.cancel();
    return { status: res.status, headers: res.headers, body: null, text: '' };
  }
  const text = await res.text();
  const type = res.headers.get('content-type') ?? '';
  return { status: res.status, headers: res.headers, body: text !== '' && type.includes('json') ? (JSON.parse(text) as unknown) : null, text };
}

describe('every documented route, in-process', () => {
  const core = app();

  it.each(CASES.map((c) => [`${c.method} ${c.path}${c.headers?.Accept === undefined ? '' : ` (${c.headers.Accept})`}`, c] as const))('%s answers as the document says', async (_name, c) => {
    const request = new Request(`http://api.test${c.path}`, { method: c.method, headers: c.headers, body: c.body });
    const res = await observe(await core.fetch(request, { ...loopback, peerAddress: c.caller ?? loopback.peerAddress }), c.endless === true);
    expect(res.status, res.text).toBe(c.status);
    expectContract(c.method, c.template, res);
  });

  it('reaches every operation the document gives', () => {
    const reached = new Set(CASES.map((c) => `${c.method.toLowerCase()} ${c.template}`));
    const documented = Object.entries(openapi.paths).flatMap(([template, operations]) => Object.keys(operations).filter((m) => ['get', 'post', 'options'].includes(m)).map((m) => `${m} ${template}`));
    expect(documented.filter((op) => !reached.has(op))).toEqual([]);
  });
});
