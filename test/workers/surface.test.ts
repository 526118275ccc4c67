// The HTTP surface in workerd: every route answers as on Node, against the same OpenAPI
// contract, with and without request.cf; 404, 405, OPTIONS, HEAD and CORS; configuration errors.
import { describe, expect, it } from 'vitest';
import { expectContract } from '../support/contract.js';
import { FULL_CF, codeOf, workerWith, type Reply } from './worker.js';

const worker = workerWith({ NETDIAG_PROBES: 'weur=durable-object' });

/**
 * `measured` names the one field of `data` a route measures afresh for every request: its text,
 * and so the body's length, can differ between any two requests (a round trip of 9 ms, then
 * 10 ms, on workerd's coarse clock). Everything else in these bodies is the same bytes for the
 * same caller.
 */
const GETS: readonly { path: string; template: string; measured?: string }[] = [
  { path: '/v1/health', template: '/v1/health' },
  { path: '/v1/latency/regions', template: '/v1/latency/regions' },
  { path: '/v1/speed-test/configuration', template: '/v1/speed-test/configuration' },
  { path: '/v1/latency/regions/weur/probe', template: '/v1/latency/regions/{region}/probe', measured: 'edge_to_region_rtt_ms' },
  { path: '/v1/ip', template: '/v1/ip' },
];

/**
 * The longest text a probe's round trip can have: below the Workers probes' 2 s deadline
 * (src/runtime/workers/ports/probe-client.ts; past it the route is 503), to the microsecond: "1999.999".
 */
const LONGEST_RTT_TEXT = '1999.999'.length;

const CF_VARIANTS = [
  { name: 'full', cf: FULL_CF },
  { name: 'partial', cf: { colo: 'LHR', asn: 2856 } },
  { name: 'missing', cf: undefined },
] as const;

function exposes(res: Reply): void {
  expect(res.headers.get('access-control-allow-origin')).toBe('*');
  expect(res.headers.get('access-control-allow-credentials')).toBeNull();
  expect(res.headers.get('access-control-expose-headers')).toContain('X-Request-ID');
  expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
}

describe('every GET route in workerd', () => {
  for (const variant of CF_VARIANTS) {
    it.each(GETS)(`$path with a ${variant.name} request.cf answers within the contract`, async ({ path, template }) => {
      const res = await worker.send(path, { caller: '198.51.100.20', ...(variant.cf === undefined ? {} : { cf: variant.cf }) });
      expect(res.status).toBe(200);
      expectContract('GET', template, res);
      exposes(res);
    });
  }

  it('/v1/openapi.json is the document the suites check against', async () => {
    const res = await worker.send('/v1/openapi.json');
    expect(res.status).toBe(200);
    expect((res.body as { openapi: string }).openapi).toMatch(/^3\.1/);
  });

  it('regions show exactly the configured probe available', async () => {
    const res = await worker.send('/v1/latency/regions');
    const regions = (res.body as { data: { regions: { id: string; available: boolean }[] } }).data.regions;
    expect(regions.filter((r) => r.available).map((r) => r.id)).toEqual(['weur']);
  });
});

describe('methods, CORS and errors in workerd', () => {
  it('an unknown path is a 404 problem', async () => {
    const res = await worker.send('/v2/nothing');
    expect(res.status).toBe(404);
    expect(codeOf(res)).toBe('not_found');
    expect(res.headers.get('cache-control')).toBe('no-store');
    exposes(res);
  });

  it('another method on a known path is 405 with Allow', async () => {
    const res = await worker.send('/v1/health', { method: 'DELETE' });
    expect(res.status).toBe(405);
    expect(codeOf(res)).toBe('method_not_allowed');
    expect(res.headers.get('allow')).toContain('GET');
  });

  it('OPTIONS on a known path is 204 with the CORS preflight headers', async () => {
    const res = await worker.send('/v1/events', { method: 'OPTIONS' });
    expect(res.status).toBe(204);
    expect(res.headers.get('allow')).toContain('POST');
    expect(res.headers.get('access-control-allow-methods')).toContain('POST');
    expect(res.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('content-type');
    expect(res.headers.get('access-control-max-age')).not.toBeNull();
  });

  it.each(GETS)('HEAD $path answers the headers of GET with no body', async ({ path, measured }) => {
    const get = await worker.send(path, { caller: '198.51.100.21' });
    const head = await worker.send(path, { caller: '198.51.100.21', method: 'HEAD' });
    expect(head.status).toBe(get.status);
    expect(head.text).toBe('');
    const names = (r: Reply) => [...r.headers.keys()].filter((n) => n !== 'x-request-id').sort();
    expect(names(head)).toEqual(names(get));
    // HEAD runs the GET (RFC 9110 §9.3.2): its Content-Length is that of the body it would have
    // sent, which for a measured figure is a body of its own, not the GET's.
    expect(head.headers.get('content-length')).toMatch(/^[1-9]\d*$/);
    const headLength = Number(head.headers.get('content-length'));
    const getLength = Number(get.headers.get('content-length'));
    if (measured === undefined) {
      expect(headLength).toBe(getLength);
      return;
    }
    // The invariant: the body less the measured figure's text. What HEAD's figure took is then
    // what is left, and it must be the text of a round trip, never nothing or a whole body more.
    const figure = (get.body as { data: Record<string, unknown> }).data[measured];
    expect(typeof figure).toBe('number');
    const rest = getLength - JSON.stringify(figure).length;
    expect(headLength - rest).toBeGreaterThanOrEqual(1);
    expect(headLength - rest).toBeLessThanOrEqual(LONGEST_RTT_TEXT);
  });

  it('Content-Length is the body length in bytes', async () => {
    const res = await worker.send('/v1/ip', { caller: '198.51.100.22', cf: { ...FULL_CF, city: 'Zürich' } });
    expect(Number(res.headers.get('content-length'))).toBe(new TextEncoder().encode(res.text).byteLength);
  });
});

describe('configuration on Workers', () => {
  it.each([
    ['NETDIAG_DNS_UPSTREAM', 'https://1.1.1.1/dns-query', 'names an IP address'],
    ['NETDIAG_DNS_UPSTREAM', 'http://dns.example/dns-query', 'must be an https:// DoH URL'],
    ['NETDIAG_LIMITER', 'redis', 'must be durable-object or binding'],
    ['NETDIAG_PROBES', 'apac-ne=durable-object,apac-se=durable-object', 'one "apac" location hint'],
    ['NETDIAG_RATE_LIMIT_KEY', 'short', 'at least 32 characters'],
    ['NETDIAG_RATE_LIMITS', 'dns=0', 'whole number'],
  ])('%s=%s answers 500 and logs the variable, never a wrong answer', async (name, value, reason) => {
    const lines: string[] = [];
    const original = console.error;
    console.error = (line: string) => lines.push(line);
    try {
      const res = await workerWith({ [name]: value }).send('/v1/health');
      expect(res.status).toBe(500);
      expect(codeOf(res)).toBe('internal_error');
      expect((res.body as { detail: string }).detail).toContain('misconfigured');
    } finally {
      console.error = original;
    }
    const logged = lines.map((l) => JSON.parse(l) as { variable: string; reason: string });
    expect(logged).toHaveLength(1);
    expect(logged[0]?.variable).toBe(name);
    expect(logged[0]?.reason).toContain(reason);
  });

  it('a missing binding the vars rely on is named', async () => {
    const lines: string[] = [];
    const original = console.error;
    console.error = (line: string) => lines.push(line);
    try {
      const res = await workerWith({ NETDIAG_EVENTS_SINK: 'analytics-engine', ANALYTICS: undefined }).send('/v1/health');
      expect(res.status).toBe(500);
    } finally {
      console.error = original;
    }
    expect(lines.join('\n')).toContain('needs the ANALYTICS binding');
  });
});
