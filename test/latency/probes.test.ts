// Regional latency probes: `npm run probe` processes, warm connections from the service, a
// probe that dies and returns, and real latency injected by a delaying relay in front of a
// probe in its own network namespace.
import { once } from 'node:events';
import { request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { probeClientConformance } from '../../src/core/ports/probe-client.conformance.js';
import { nodeMetrics } from '../../src/runtime/node/ports/metrics.js';
import { nodeProbes, PROBE_TIMING, type NodeProbes } from '../../src/runtime/node/ports/probe-client.js';
import { memoryLogger } from '../support/services.js';
import { expectContract, expectSchema } from '../support/contract.js';
import { startDelayRelay, type DelayRelay } from '../support/delay-relay.js';
import { send, type Reply } from '../support/http.js';
import { canMakeNetns, createNetns, type Netns } from '../support/netns.js';
import { startProbeProcess, type ProbeProcess } from '../support/probe.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';
import { eventually, freePort } from '../support/wait.js';

const TEMPLATE = '/v1/latency/regions/{region}/probe';
const LIMITS = { NETDIAG_RATE_LIMITS: 'probe=100000' };

interface ProbeData {
  region: string;
  edge_to_region_rtt_ms: number;
  client_to_api_rtt_ms: null;
  client_observed_total_rtt_ms: null;
  measurement_scope: string;
}
const rttOf = (res: Reply) => (res.body as { data: ProbeData }).data.edge_to_region_rtt_ms;

// Bounds come from the service's probe timing, never from how fast this machine is.
const { deadlineMs: DEADLINE_MS, retryMs: RETRY_MS } = PROBE_TIMING;
/** The service finds a probe that came up within a few of its retries (wide: a loaded machine). */
const FOUND_WITHIN_MS = 5 * RETRY_MS;
/**
 * A loopback round trip is far under the deadline; a quarter of it still tells a figure from a
 * deadline's worth of waiting. That the figure is a round trip, in milliseconds, is checked
 * against a known injected delay in the namespace suite below.
 */
const LOOPBACK_RTT_UNDER_MS = DEADLINE_MS / 4;

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;

describe('regional probes on loopback', () => {
  let probe: ProbeProcess;
  let service: TestServer;
  let deadPort: number;
  const probeUrl = (region: string) => `${service.url}/v1/latency/regions/${region}/probe`;
  const logsSaying = (msg: string, region: string) => service.logs().filter((l) => l.msg === msg && l.region === region);

  beforeAll(async () => {
    probe = await startProbeProcess();
    deadPort = await freePort();
    service = await startTestServer({
      ...LIMITS,
      NETDIAG_PROBES: `weur=http://127.0.0.1:${probe.port}, enam=http://127.0.0.1:${deadPort}/`,
    });
    expect(await eventually(() => logsSaying('probe reachable', 'weur').length === 1, FOUND_WITHIN_MS)).toBe(true);
  });
  afterAll(async () => {
    await service.close();
    await probe.kill('SIGTERM');
  });

  it('lists exactly the configured regions as available', async () => {
    const res = await send(`${service.url}/v1/latency/regions`);
    expectContract('GET', '/v1/latency/regions', res);
    const regions = (res.body as { data: { regions: { id: string; available: boolean }[] } }).data.regions;
    expect(regions.filter((r) => r.available).map((r) => r.id)).toEqual(['wnam', 'enam', 'weur', 'eeur', 'apac-ne', 'apac-se', 'oc'].filter((id) => id === 'weur' || id === 'enam'));
  });

  it('measures one round trip to a running probe', async () => {
    const res = await send(probeUrl('weur'));
    expect(res.status).toBe(200);
    expectContract('GET', TEMPLATE, res);
    const data = (res.body as { data: ProbeData }).data;
    expect(data.region).toBe('weur');
    expect(data.client_to_api_rtt_ms).toBeNull();
    expect(data.client_observed_total_rtt_ms).toBeNull();
    expect(data.measurement_scope).toBe('provider_edge_to_regional_probe');
    expect(data.edge_to_region_rtt_ms).toBeGreaterThan(0);
    expect(data.edge_to_region_rtt_ms).toBeLessThan(LOOPBACK_RTT_UNDER_MS);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('ratelimit-limit')).toBe('100000');
  });

  it('is 503 probe_unavailable for a region without a probe, and 400 for an unknown region', async () => {
    const none = await send(probeUrl('oc'));
    expect(none.status).toBe(503);
    expectContract('GET', TEMPLATE, none);
    expect((none.body as { code: string }).code).toBe('probe_unavailable');
    const unknown = await send(probeUrl('mars'));
    expect(unknown.status).toBe(400);
    expectContract('GET', TEMPLATE, unknown);
  });

  it('is 503 within the deadline for a configured probe that refuses connections, logged once', async () => {
    const started = performance.now();
    const replies = await Promise.all([send(probeUrl('enam')), send(probeUrl('enam'))]);
    await send(probeUrl('enam'));
    expect(replies.map((r) => r.status)).toEqual([503, 503]);
    expect((replies[0].body as { code: string }).code).toBe('probe_unavailable');
    // A refusal is answered when it comes, not when the deadline runs out (3 requests, ~ms).
    expect(performance.now() - started).toBeLessThan(DEADLINE_MS);
    expect(logsSaying('probe unreachable', 'enam')).toHaveLength(1);
    expect(logsSaying('probe unreachable', 'enam')[0]?.reason).toBe('ECONNREFUSED');
  });

  it('is 503 at the deadline for a probe that accepts connections and never answers', async () => {
    // A FAKE probe: a fault no real probe produces on demand (a hung process behind an open port).
    const silent = createServer((socket) => {
      socket.on('data', () => undefined);
    });
    silent.listen(0, '127.0.0.1');
    await once(silent, 'listening');
    const port = (silent.address() as { port: number }).port;
    const hung = await startTestServer({ ...LIMITS, NETDIAG_PROBES: `apac-ne=http://127.0.0.1:${String(port)}` });
    try {
      const started = performance.now();
      const res = await send(`${hung.url}/v1/latency/regions/apac-ne/probe`);
      const elapsed = performance.now() - started;
      expect(res.status).toBe(503);
      expect((res.body as { code: string }).code).toBe('probe_unavailable');
      // Ended by the service's own deadline (it may have started with the start-up's warm-up
      // request, which this one shares, so no floor), not by an HTTP client's minutes-long one.
      expect(elapsed).toBeLessThan(4 * DEADLINE_MS);
      expect(hung.logs().filter((l) => l.msg === 'probe unreachable')).toHaveLength(1);
    } finally {
      await hung.close();
      silent.close();
    }
  });

  it('the probe exposes its measurement path, its health and nothing else', async () => {
    const base = `http://127.0.0.1:${probe.port}`;
    const rtt = await send(`${base}/rtt`);
    expect(rtt.status).toBe(204);
    expect(rtt.text).toBe('');
    const health = await send(`${base}/health`);
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ status: 'ok' });
    expect((await send(`${base}/`)).status).toBe(404);
    const missing = await send(`${base}/v1/ip`);
    expect(missing.status).toBe(404);
    // Its errors are problems from the service's catalogue, as complete as the API's.
    expectSchema('Problem', missing.body);
    expect(missing.body).toMatchObject({ code: 'not_found', type: `${base}/problems/not_found`, request_id: missing.headers.get('x-request-id') });
    const post = await send(`${base}/rtt`, { method: 'POST', body: 'x' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    expect(post.body).toMatchObject({ code: 'method_not_allowed', status: 405 });
    // It holds idle connections open for the edge far longer than an API server would.
    const kept = await fetch(`${base}/rtt`);
    expect(kept.headers.get('keep-alive')).toBe('timeout=75');
  });

  it('a killed probe gives 503, and is measured again once it returns, without a restart', async () => {
    const port = probe.port;
    await probe.kill('SIGKILL');
    const down = await send(probeUrl('weur'));
    expect(down.status).toBe(503);
    expect((down.body as { code: string }).code).toBe('probe_unavailable');
    expect(logsSaying('probe unreachable', 'weur')).toHaveLength(1);

    probe = await startProbeProcess({ port });
    // Found again by the service's own retries, with no restart.
    expect(await eventually(() => logsSaying('probe reachable', 'weur').length === 2, FOUND_WITHIN_MS)).toBe(true);
    const back = await send(probeUrl('weur'));
    expect(back.status).toBe(200);
    expect(rttOf(back)).toBeLessThan(LOOPBACK_RTT_UNDER_MS);
  });
});

const namespaces = canMakeNetns() && requireCommands('probe latency through a veth pair', ['ip'], 'iproute2');
if (!canMakeNetns()) {
  if (process.env.CI === 'true') throw new Error('probe latency suite: needs root for network namespaces; CI requires it');
  process.stderr.write('\n*** SKIPPED probe latency through a veth pair: needs root for network namespaces ***\n\n');
}

describe.skipIf(!namespaces)('real latency: a probe in a network namespace behind a 100 ms delaying relay', () => {
  // Large beside what a loaded machine adds to a loopback hop, so the bands below, fractions of
  // this round trip, are wide; a connection's set-up through the relay costs one more of it.
  const ONE_WAY_MS = 50;
  const INJECTED_RTT_MS = 2 * ONE_WAY_MS;
  let netns: Netns;
  let probe: ProbeProcess;
  let relay: DelayRelay;
  let service: TestServer;
  const probeUrl = () => `${service.url}/v1/latency/regions/weur/probe`;

  beforeAll(async () => {
    netns = createNetns();
    probe = await startProbeProcess({ host: netns.nsAddress, port: 8081, wrap: (argv) => netns.exec(argv) });
    relay = await startDelayRelay({ host: netns.nsAddress, port: probe.port }, ONE_WAY_MS);
    service = await startTestServer({ ...LIMITS, NETDIAG_PROBES: `weur=http://127.0.0.1:${relay.port}` });
    expect(await eventually(() => service.logs().some((l) => l.msg === 'probe reachable'), FOUND_WITHIN_MS)).toBe(true);
  });
  afterAll(async () => {
    await service.close();
    await relay.close();
    await probe.kill('SIGTERM');
    netns.destroy();
  });

  it('the path is real: a request on a new connection pays set-up and a round trip (two injected round trips)', async () => {
    const started = performance.now();
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(`http://127.0.0.1:${String(relay.port)}/rtt`, { agent: false }, (res) => {
        res.resume();
        res.on('end', () => {
          resolve(res.statusCode ?? 0);
        });
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(204);
    expect(performance.now() - started).toBeGreaterThanOrEqual(2 * INJECTED_RTT_MS);
  });

  it('reports the injected round trip, without connection set-up (60 measurements: median within half a round trip)', async () => {
    const rtts: number[] = [];
    for (let i = 0; i < 60; i++) {
      const res = await send(probeUrl());
      expect(res.status).toBe(200);
      rtts.push(rttOf(res));
    }
    const overhead = rtts.map((r) => r - INJECTED_RTT_MS).sort((a, b) => a - b);
    const median = percentile(overhead, 50);
    const p95 = percentile(overhead, 95);
    process.stdout.write(
      `probe overhead over ${INJECTED_RTT_MS} ms injected: median ${median.toFixed(3)} ms, p95 ${p95.toFixed(3)} ms, ` +
        `min ${overhead[0]?.toFixed(3)} ms, max ${overhead.at(-1)?.toFixed(3)} ms (n=${overhead.length}); probe RSS ${probe.rssMiB().toFixed(1)} MiB\n`,
    );
    // Never less than the delay itself: the figure is a real round trip through the relay.
    expect(overhead[0]).toBeGreaterThanOrEqual(0);
    // A measurement that paid for set-up would be a whole injected round trip over; a loaded
    // machine adds milliseconds. So: the typical one within half a round trip of the delay,
    // and not even the 95th percentile a round trip over.
    expect(median).toBeLessThan(INJECTED_RTT_MS / 2);
    expect(p95).toBeLessThan(INJECTED_RTT_MS);
  });

  it('concurrent measurements of one region are not queued behind each other', async () => {
    const replies = await Promise.all(Array.from({ length: 8 }, () => send(probeUrl())));
    for (const res of replies) {
      expect(res.status).toBe(200);
      expect(rttOf(res)).toBeGreaterThanOrEqual(INJECTED_RTT_MS);
      // Eight requests queued on one connection would report up to eight round trips, and one
      // on a connection of its own would pay set-up: either is two round trips or more.
      expect(rttOf(res)).toBeLessThan(2 * INJECTED_RTT_MS);
    }
  });

  it('the probe process stays small', () => {
    expect(probe.rssMiB()).toBeLessThan(100);
  });
});

describe("Node's probe client held to the port's conformance suite", () => {
  let probe: ProbeProcess;
  let deadPort: number;
  const made: NodeProbes[] = [];
  beforeAll(async () => {
    probe = await startProbeProcess();
    deadPort = await freePort();
  });
  afterAll(async () => {
    await Promise.all(made.map((p) => p.close()));
    await probe.kill('SIGTERM');
  });

  const warm = async (observed: boolean) => {
    const probes = nodeProbes(
      new Map([
        ['weur', `http://127.0.0.1:${String(probe.port)}`],
        ['enam', `http://127.0.0.1:${String(deadPort)}/`],
      ]),
      memoryLogger(),
    );
    made.push(probes);
    // The warm connection opens at once; a measurement is held to it once it is there.
    expect(await eventually(() => probes.reachable('weur') === true, FOUND_WITHIN_MS)).toBe(true);
    return { probes: observed ? nodeMetrics().probes(probes) : probes, answering: 'weur' as const, down: 'enam' as const };
  };
  probeClientConformance('Node (warm connections to `netdiag probe`)', () => warm(false));
  probeClientConformance('Node, behind the /metrics observer', () => warm(true));
});
