// `PORT=N npm run dev:workers` as an operator runs it: wrangler serves the
// Workers build on 127.0.0.1:N with no network, with miniflare's placeholder request.cf, the
// Durable Object probes wrangler.jsonc names, and a DoH upstream set in the vars (Knot).
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFaultyDohFront } from '../support/doh-relay.js';
import { startKnot, type Knot } from '../support/knot.js';
import { expectContract } from '../support/contract.js';
import { freePort } from '../support/wait.js';
import { requireCommands } from '../support/system.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const haveKnot = requireCommands('dev:workers suite', ['knotd'], 'knot');

describe.skipIf(!haveKnot)('npm run dev:workers', () => {
  let child: ChildProcess;
  let knot: Knot;
  let front: Awaited<ReturnType<typeof startFaultyDohFront>>;
  let base = '';
  let output = '';

  beforeAll(async () => {
    knot = await startKnot();
    front = await startFaultyDohFront(knot.port);
    const port = await freePort();
    base = `http://127.0.0.1:${String(port)}`;
    child = spawn('npm', ['run', 'dev:workers', '--', '--var', `NETDIAG_DNS_UPSTREAM:${front.url}`], {
      cwd: ROOT,
      // No key given: the script makes one for the session, as it does for an operator.
      env: Object.fromEntries(Object.entries({ ...process.env, PORT: String(port) }).filter(([name]) => name !== 'NETDIAG_RATE_LIMIT_KEY')),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
    for (let i = 0; i < 240; i++) {
      try {
        if ((await fetch(`${base}/v1/health`)).ok) return;
      } catch {
        // not yet listening
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    throw new Error(`dev:workers did not serve within 60 s:\n${output}`);
  }, 90_000);

  afterAll(async () => {
    if (child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
    await front.close();
    await knot.close();
  });

  const get = async (path: string, init?: RequestInit) => {
    const res = await fetch(`${base}${path}`, init);
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, body: text === '' ? null : (JSON.parse(text) as unknown) };
  };

  it('prints no error and no stack trace while offline (no fetch of the real request.cf)', () => {
    expect(output).not.toMatch(/ENOTFOUND|getaddrinfo|^\s+at /m);
  });

  it('/v1/health is 200 on 127.0.0.1 at PORT', async () => {
    const res = await get('/v1/health');
    expect(res.status).toBe(200);
    expectContract('GET', '/v1/health', res);
  });

  it("/v1/ip answers CF-Connecting-IP with the placeholder request.cf's colo, location, network and protocol, and no TLS over plain HTTP", async () => {
    const res = await get('/v1/ip', { headers: { 'CF-Connecting-IP': '203.0.113.9' } });
    expectContract('GET', '/v1/ip', res);
    const data = (res.body as { data: Record<string, unknown> }).data;
    expect(data.address).toBe('203.0.113.9');
    expect(data.connection).toEqual({ provider_colo: 'DFW', http_protocol: 'HTTP/1.1', tls_version: null });
    expect(data.location).toMatchObject({ city: 'Austin', country_code: 'US', latitude: 30.2713, longitude: -97.7426 });
    expect(data.network).toMatchObject({ asn: 395747 });
  });

  it('regions show the probes wrangler.jsonc configures, and one answers 200', async () => {
    const regions = await get('/v1/latency/regions');
    const available = (regions.body as { data: { regions: { id: string; available: boolean }[] } }).data.regions.filter((r) => r.available).map((r) => r.id);
    expect(available).toEqual(['wnam', 'enam', 'weur', 'eeur', 'apac-ne', 'oc']);
    const probe = await get('/v1/latency/regions/weur/probe', { headers: { 'CF-Connecting-IP': '203.0.113.10' } });
    expectContract('GET', '/v1/latency/regions/{region}/probe', probe);
    expect(probe.status).toBe(200);
  });

  it("DNS goes to the DoH upstream set in the vars (Knot's answer)", async () => {
    const res = await get('/v1/dns/resolve?name=www.example.test&type=A', { headers: { 'CF-Connecting-IP': '203.0.113.11' } });
    expectContract('GET', '/v1/dns/resolve', res);
    expect((res.body as { data: { answers: { address: string }[] } }).data.answers.map((a) => a.address)).toEqual(['192.0.2.10']);
  });

  // Separate HTTP requests are separate request contexts in workerd, which refuses to let one
  // request settle a promise another made: the shared query must still reach every waiter.
  it('identical concurrent misses from separate requests share one upstream query, and each gets the answer', async () => {
    const name = `slow-${String(Date.now())}.example.test`;
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => get(`/v1/dns/resolve?name=${name}&type=A`, { headers: { 'CF-Connecting-IP': `203.0.113.${String(20 + i)}` } })),
    );
    for (const res of results) {
      expectContract('GET', '/v1/dns/resolve', res);
      expect(res.status).toBe(200);
      expect((res.body as { data: { response_code: string } }).data.response_code).toBe('name_error');
    }
    const counted = (await (await fetch(new URL(`/queries?name=${name}`, front.url))).json()) as { queries: number };
    expect(counted.queries).toBe(1);
  });

  it('events 202, and 404, 405, OPTIONS, HEAD and CORS as on Node', async () => {
    const event = { event: 'speed_test_started', event_id: crypto.randomUUID(), properties: { source: 'web' } };
    const accepted = await get('/v1/events', { method: 'POST', headers: { 'Content-Type': 'application/json', 'CF-Connecting-IP': '203.0.113.12' }, body: JSON.stringify(event) });
    expectContract('POST', '/v1/events', accepted);
    expect(accepted.status).toBe(202);
    expect((await get('/nowhere')).status).toBe(404);
    const wrong = await get('/v1/health', { method: 'PUT' });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toContain('GET');
    const options = await get('/v1/events', { method: 'OPTIONS' });
    expect(options.status).toBe(204);
    expect(options.headers.get('access-control-allow-methods')).toContain('POST');
    const head = await fetch(`${base}/v1/health`, { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    expect(head.headers.get('access-control-allow-origin')).toBe('*');
    expect(head.headers.get('access-control-expose-headers')).toContain('RateLimit-Remaining');
  });
});
