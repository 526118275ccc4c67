// The whole v1 HTTP surface over a real socket: envelope, headers, methods, CORS, errors.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPENAPI_PATH } from '../../src/runtime/node/adapter/load-openapi.js';
import { expectContract, expectSchema, openapi } from '../support/contract.js';
import { send, type Reply } from '../support/http.js';
import { startTestServer, type TestServer } from '../support/server.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

interface RouteCase {
  template: string;
  path: string;
  method: 'GET' | 'POST';
  limited?: true;
  cache?: string;
}

/** Every path, its OpenAPI template, a concrete URL path, its methods and its cache policy (docs/api.md). */
const ROUTES: readonly RouteCase[] = [
  { template: '/v1/ip', path: '/v1/ip', method: 'GET', limited: true },
  { template: '/v1/dns/resolve', path: '/v1/dns/resolve?name=example.com&type=A', method: 'GET', limited: true },
  { template: '/v1/latency/regions', path: '/v1/latency/regions', method: 'GET', cache: 'public, max-age=300' },
  { template: '/v1/latency/regions/{region}/probe', path: '/v1/latency/regions/weur/probe', method: 'GET', limited: true },
  { template: '/v1/speed-test/configuration', path: '/v1/speed-test/configuration', method: 'GET', cache: 'public, max-age=3600' },
  { template: '/v1/events', path: '/v1/events', method: 'POST', limited: true },
  { template: '/v1/health', path: '/v1/health', method: 'GET', cache: 'public, max-age=30' },
  { template: '/v1/openapi.json', path: '/v1/openapi.json', method: 'GET', cache: 'public, max-age=300' },
];

const EXPOSED = ['X-Request-ID', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After'];

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ NETDIAG_PROBES: 'weur=http://127.0.0.1:9/,oc=http://127.0.0.1:9/' });
});
afterAll(() => server.close());

function expectCors(res: Reply): void {
  expect(res.headers.get('access-control-allow-origin')).toBe('*');
  expect(res.headers.get('access-control-allow-credentials')).toBeNull();
  const exposed = (res.headers.get('access-control-expose-headers') ?? '').split(',').map((h) => h.trim().toLowerCase());
  for (const name of EXPOSED) expect(exposed).toContain(name.toLowerCase());
}

function expectEnvelope(res: Reply, before: number): { data: unknown; meta: Record<string, unknown> } {
  const body = res.body as { data: unknown; meta: Record<string, unknown> };
  expect(Object.keys(body).sort()).toEqual(['data', 'meta']);
  expect(body.meta.api_version).toBe('v1');
  expect(body.meta.request_id).toMatch(UUID);
  expect(body.meta.request_id).toBe(res.headers.get('x-request-id'));
  const at = body.meta.requested_at as string;
  expect(at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
  expect(Date.parse(at)).toBeGreaterThanOrEqual(before - 1000);
  expect(Date.parse(at)).toBeLessThanOrEqual(Date.now() + 1000);
  return body;
}

function expectProblem(res: Reply, status: number, code: string, base = server.url): Record<string, unknown> {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toBe('application/problem+json');
  expect(res.headers.get('cache-control')).toBe('no-store');
  expectCors(res);
  const problem = res.body as Record<string, unknown>;
  expectSchema('Problem', problem);
  expect(problem.status).toBe(status);
  expect(problem.code).toBe(code);
  expect(problem.type).toBe(`${base}/problems/${code}`);
  expect(problem.request_id).toBe(res.headers.get('x-request-id'));
  expect(JSON.stringify(problem)).not.toMatch(/at \w+ \(|node:|\/src\/|\.ts:/);
  return problem;
}

describe('GET /v1/health', () => {
  it('answers the exact health data in the envelope with a 30 s cache', async () => {
    const before = Date.now();
    const res = await send(`${server.url}/v1/health`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.get('cache-control')).toBe('public, max-age=30');
    expectCors(res);
    const { data } = expectEnvelope(res, before);
    expect(data).toEqual({ status: 'ok', api_version: 'v1', upstream_provider_health: 'not_checked' });
    expectContract('GET', '/v1/health', res);
  });
});

describe('GET /v1/speed-test/configuration', () => {
  it('has the constant fields, both modes, and the analytics advert of the spec', async () => {
    const res = await send(`${server.url}/v1/speed-test/configuration`);
    expect(res.status).toBe(200);
    expectContract('GET', '/v1/speed-test/configuration', res);
    const { data } = expectEnvelope(res, Date.now() - 5000) as { data: Record<string, unknown> };
    expect(data.configuration_version).toBe(1);
    expect(data.execution).toBe('client');
    expect(data.engine).toBe('@provider/speedtest');
    expect(data.results_persisted_by_service).toBe(false);
    expect(data.analytics).toEqual({
      schema_version: 1,
      events: ['speed_test_started', 'speed_test_completed', 'speed_test_failed', 'speed_test_shared'],
      event_id: 'random_uuid_per_test',
      endpoint: '/v1/events',
    });
    const units = data.metric_units as Record<string, string>;
    expect(Object.keys(units).length).toBeGreaterThan(0);
    for (const value of Object.values(units)) expect(typeof value).toBe('string');
    const limits = data.limits as Record<string, number>;
    for (const value of Object.values(limits)) expect(Number.isInteger(value)).toBe(true);

    const modes = data.modes as { id: string; description: string; measurements: Record<string, unknown>[] }[];
    expect(modes.map((m) => m.id)).toEqual(['light', 'full']);
    for (const mode of modes) {
      expect(mode.description.length).toBeGreaterThan(0);
      const types = new Set(mode.measurements.map((m) => m.type));
      expect([...types].sort()).toEqual(['download', 'latency', 'upload']);
    }
    const full = modes[1]?.measurements ?? [];
    const sizes = (type: string) => full.filter((m) => m.type === type).map((m) => m.bytes_per_request as number);
    // The full plan ramps both directions from 100 kB up to 100 MB or more.
    for (const type of ['download', 'upload']) {
      expect(Math.min(...sizes(type))).toBe(100_000);
    }
    expect(Math.max(...sizes('download'))).toBeGreaterThanOrEqual(100_000_000);
    const light = modes[0]?.measurements ?? [];
    expect(Math.max(...light.map((m) => (m.bytes_per_request as number | undefined) ?? 0))).toBeLessThan(
      Math.max(...sizes('download')),
    );
  });
});

describe('GET /v1/latency/regions', () => {
  it('lists the seven regions with their stable names; available exactly where a probe is configured', async () => {
    const res = await send(`${server.url}/v1/latency/regions`);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('public, max-age=300');
    expectContract('GET', '/v1/latency/regions', res);
    const { data } = expectEnvelope(res, Date.now() - 5000) as { data: { regions: unknown[] } };
    expect(data.regions).toEqual([
      { id: 'wnam', name: 'Western North America', available: false },
      { id: 'enam', name: 'Eastern North America', available: false },
      { id: 'weur', name: 'Western Europe', available: true },
      { id: 'eeur', name: 'Eastern Europe', available: false },
      { id: 'apac-ne', name: 'Asia-Pacific Northeast', available: false },
      { id: 'apac-se', name: 'Asia-Pacific Southeast', available: false },
      { id: 'oc', name: 'Oceania', available: true },
    ]);
  });
});

describe('GET /v1/openapi.json', () => {
  it('serves the OpenAPI document the suites validate against', async () => {
    const res = await send(`${server.url}/v1/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(openapi);
  });

  // Node decodes a file with any non-ASCII byte into a two-byte string, and the document's keys
  // ("X-Request-ID", "address", "application/json", ...) then enter V8's string table in two-byte
  // form. Every literal with the same text resolves to that entry, so every JSON body and header
  // becomes two-byte: about 1.5 µs more per response on the cached DNS route (README, Design).
  it('is ASCII, so the strings it loads stay one-byte', () => {
    const text = readFileSync(OPENAPI_PATH, 'utf8');
    const offending = [...text.matchAll(/[^\t\n\r\x20-\x7e]/g)].map((m) => `${JSON.stringify(m[0])} at ${m.index}`);
    expect(offending).toEqual([]);
  });
});

describe('every route', () => {
  it.each(ROUTES.filter((r) => r.method === 'GET'))('$template: HEAD answers the headers of GET with no body', async (route) => {
    const get = await send(`${server.url}${route.path}`);
    const head = await send(`${server.url}${route.path}`, { method: 'HEAD' });
    expect(head.status).toBe(get.status);
    expect(head.text).toBe('');
    const names = (r: Reply) => [...r.headers.keys()].filter((n) => n !== 'date' && n !== 'x-request-id').sort();
    expect(names(head)).toEqual(names(get));
    for (const name of names(get)) {
      if (name.startsWith('ratelimit-')) continue; // the window moved on by one request
      expect(head.headers.get(name), name).toBe(get.headers.get(name));
    }
    expect(head.headers.get('x-request-id')).toMatch(UUID);
    expect(head.headers.get('x-request-id')).not.toBe(get.headers.get('x-request-id'));
  });

  it.each(ROUTES)('$template: OPTIONS preflight from a foreign origin is 204 with the allowed methods', async (route) => {
    const res = await send(`${server.url}${route.path}`, {
      method: 'OPTIONS',
      headers: {
        Origin: 'https://app.example.org',
        'Access-Control-Request-Method': route.method,
        'Access-Control-Request-Headers': 'content-type',
      },
    });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expectCors(res);
    const allow = route.method === 'GET' ? 'GET, HEAD, OPTIONS' : 'POST, OPTIONS';
    expect(res.headers.get('allow')).toBe(allow);
    expect(res.headers.get('access-control-allow-methods')).toBe(allow);
    expect(res.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('content-type');
    expect(Number(res.headers.get('access-control-max-age'))).toBeGreaterThan(0);
    expect(res.headers.get('x-request-id')).toMatch(UUID);
    expectContract('OPTIONS', route.template, { ...res, body: null });
  });

  it.each(ROUTES)('$template: other methods get 405 with Allow', async (route) => {
    const others = ['PUT', 'DELETE', 'PATCH', route.method === 'GET' ? 'POST' : 'GET'];
    for (const method of others) {
      const res = await send(`${server.url}${route.path}`, { method, headers: { 'Content-Type': 'application/json' }, body: '{}' });
      const problem = expectProblem(res, 405, 'method_not_allowed');
      expect(res.headers.get('allow')).toBe(route.method === 'GET' ? 'GET, HEAD, OPTIONS' : 'POST, OPTIONS');
      expect(problem.detail).toContain(method);
      expectContract(method === 'GET' ? 'POST' : route.method, route.template, res);
    }
  });

  it.each(ROUTES.filter((r) => r.cache !== undefined))('$template: Cache-Control is the route policy', async (route) => {
    const res = await send(`${server.url}${route.path}`);
    expect(res.headers.get('cache-control')).toBe(route.cache);
  });

  it.each(ROUTES.filter((r) => r.limited))('$template: limited routes carry the RateLimit headers', async (route) => {
    const res = await send(`${server.url}${route.path}`, { method: route.method });
    // Each header present and a whole number (Number(null) is 0: a missing header must not pass as one).
    expect(res.headers.get('ratelimit-limit')).toMatch(/^[1-9]\d*$/);
    expect(res.headers.get('ratelimit-remaining')).toMatch(/^\d+$/);
    expect(res.headers.get('ratelimit-reset')).toMatch(/^[1-9]\d*$/);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expectContract(route.method, route.template, res);
  });

  it('unlimited routes never carry RateLimit headers', async () => {
    for (const path of ['/v1/health', '/v1/latency/regions', '/v1/speed-test/configuration']) {
      const res = await send(`${server.url}${path}`);
      expect([...res.headers.keys()].filter((n) => n.startsWith('ratelimit'))).toEqual([]);
    }
  });
});

describe('errors', () => {
  it.each(['/v1', '/v1/health/', '/v1/HEALTH', '/v2/health', '/v1/latency/regions/weur', '/v1/latency/regions/weur/probe/x'])(
    '%s is 404 not_found',
    async (path) => {
      const res = await send(`${server.url}${path}`);
      expectProblem(res, 404, 'not_found');
      expect(res.headers.get('x-request-id')).toMatch(UUID);
    },
  );

  it('an unknown region is 400 unknown_region', async () => {
    const res = await send(`${server.url}/v1/latency/regions/mars/probe`);
    const problem = expectProblem(res, 400, 'unknown_region');
    expect(problem.detail).toContain('wnam');
    expectContract('GET', '/v1/latency/regions/{region}/probe', res);
  });

  it('a region without a probe is 503 probe_unavailable', async () => {
    const res = await send(`${server.url}/v1/latency/regions/wnam/probe`);
    expectProblem(res, 503, 'probe_unavailable');
    expectContract('GET', '/v1/latency/regions/{region}/probe', res);
  });

  /** Raw bytes in, the whole answer out (the connection is closed after a refusal). */
  async function raw(bytes: string): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
    const { connect } = await import('node:net');
    const socket = connect(server.port, '127.0.0.1');
    socket.write(bytes);
    const text = await new Promise<string>((resolve) => {
      let data = '';
      socket.on('data', (chunk: Buffer) => (data += chunk.toString()));
      socket.on('close', () => { resolve(data); });
    });
    const [head = '', body = ''] = text.split('\r\n\r\n');
    const [statusLine = '', ...lines] = head.split('\r\n');
    const headers = new Headers(lines.map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()] as [string, string]));
    expect(text).not.toMatch(/at \w+ \(|node:/);
    return { status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(body) as Record<string, unknown> };
  }

  it('a request Node cannot parse gets a problem from the catalogue, with type, code and request id', async () => {
    const res = await raw('GARBAGE / HTTP/1.1\r\n\r\n');
    expect(res.status).toBe(400);
    expectProblem({ ...res, text: JSON.stringify(res.body) }, 400, 'malformed_request', `http://127.0.0.1:${String(server.port)}`);
  });

  it('oversized headers are refused with a 431 problem', async () => {
    const res = await raw(`GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expectProblem({ ...res, text: JSON.stringify(res.body) }, 431, 'header_fields_too_large', `http://127.0.0.1:${String(server.port)}`);
  });
});

describe('request ids', () => {
  it('are fresh UUIDs on every response and a client-sent X-Request-ID is not echoed', async () => {
    const ids = new Set<string>();
    const sent = '11111111-1111-4111-8111-111111111111';
    for (let i = 0; i < 40; i++) {
      const path = i % 2 === 0 ? '/v1/health' : '/nope';
      const res = await send(`${server.url}${path}`, { headers: { 'X-Request-ID': sent } });
      const id = res.headers.get('x-request-id') ?? '';
      expect(id).toMatch(UUID);
      ids.add(id);
    }
    expect(ids.size).toBe(40);
    expect(ids.has(sent)).toBe(false);
  });
});

describe('problem type base', () => {
  it('uses NETDIAG_PUBLIC_URL when set', async () => {
    const other = await startTestServer({ NETDIAG_PUBLIC_URL: 'https://api.example.net/' });
    try {
      const res = await send(`${other.url}/missing`);
      expectProblem(res, 404, 'not_found', 'https://api.example.net');
    } finally {
      await other.close();
    }
  });
});
