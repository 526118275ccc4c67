// /metrics (NETDIAG_METRICS_PORT) over sockets: the counters follow real traffic to every route
// (Knot as the DNS upstream, a `netdiag probe`, a collector), nothing about a caller appears in
// them, the primary thread sums its worker threads (the process's own figures counted once), the listener is absent when not configured, and a
// bad setting stops start-up naming the variable.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCollector, type Collector } from '../support/collector.js';
import { startKnot, type Knot } from '../support/knot.js';
import { startProbeProcess, type ProbeProcess } from '../support/probe.js';
import { runCli, serveCli } from '../support/process.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';
import { eventually, freePort } from '../support/wait.js';

const ready = requireCommands('metrics', ['knotd', 'ss'], 'knot iproute2');

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The Prometheus text format's samples (comments skipped). */
function parse(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1] ?? ''] = pair[2] ?? '';
    samples.push({ name: match[1] ?? '', labels, value: Number(match[3]) });
  }
  return samples;
}

/** The sum of the samples matching the name and every label given, 0 when there are none. */
function valueOr0(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((sum, s) => sum + s.value, 0);
}

/** The same, for a series that must be exported: absent, it fails (an expected 0 must be a real 0). */
function value(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.some((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (!found) throw new Error(`no ${name} sample with ${JSON.stringify(labels)}`);
  return valueOr0(samples, name, labels);
}

describe.skipIf(!ready)('/metrics', () => {
  let knot: Knot;
  let probe: ProbeProcess;
  let collector: Collector;
  let server: TestServer;
  let metricsUrl: string;

  beforeAll(async () => {
    knot = await startKnot();
    probe = await startProbeProcess();
    collector = await startCollector('accept');
    server = await startTestServer({
      NETDIAG_DNS_UPSTREAM: `udp://127.0.0.1:${String(knot.port)}`,
      NETDIAG_PROBES: `weur=http://127.0.0.1:${String(probe.port)}`,
      NETDIAG_EVENTS_SINK: collector.url,
      NETDIAG_TRUST_PROXY: 'loopback',
      NETDIAG_RATE_LIMITS: 'ip=12',
      NETDIAG_METRICS_PORT: '0',
    });
    metricsUrl = `http://127.0.0.1:${String(server.running.metricsPort)}/metrics`;
  }, 60_000);

  afterAll(async () => {
    await server.close();
    await collector.close();
    await probe.kill('SIGTERM');
    await knot.close();
  });

  const scrape = async () => {
    const res = await fetch(metricsUrl);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return parse(await res.text());
  };
  // The server trusts loopback as its proxy, so each request names its client as a proxy would.
  const call = (path: string, init: RequestInit = {}) =>
    fetch(`${server.url}${path}`, { ...init, headers: { 'X-Forwarded-For': '203.0.113.5', ...(init.headers as Record<string, string> | undefined) } }).then(async (r) => ({ status: r.status, body: await r.arrayBuffer() }));

  it('counts every route by pattern, method and status, and the DNS, limiter, events and probe figures move with traffic', async () => {
    const before = await scrape();
    const event = JSON.stringify({ event: 'speed_test_started', event_id: '7f1c3e0a-5b2d-4c8e-9a6f-1d2e3f4a5b6c', properties: { source: 'cli', mode: 'light' } });
    const traffic: [string, RequestInit, string, string, number][] = [
      ['/', { headers: { Accept: 'text/html' } }, '/', 'GET', 200],
      ['/app.js', {}, '/app.js', 'GET', 200],
      ['/app.css', {}, '/app.css', 'GET', 200],
      ['/v1/health', {}, '/v1/health', 'GET', 200],
      ['/v1/health', { method: 'HEAD' }, '/v1/health', 'HEAD', 200],
      ['/v1/health', { method: 'OPTIONS' }, '/v1/health', 'OPTIONS', 204],
      ['/v1/health', { method: 'DELETE' }, '/v1/health', 'DELETE', 405],
      ['/v1/ip', {}, '/v1/ip', 'GET', 200],
      ['/v1/dns/resolve?name=www.example.test&type=A', {}, '/v1/dns/resolve', 'GET', 200],
      ['/v1/dns/resolve?name=www.example.test&type=A', {}, '/v1/dns/resolve', 'GET', 200],
      ['/v1/dns/resolve?name=bad..name&type=A', {}, '/v1/dns/resolve', 'GET', 400],
      ['/v1/latency/regions', {}, '/v1/latency/regions', 'GET', 200],
      ['/v1/latency/regions/weur/probe', {}, '/v1/latency/regions/:region/probe', 'GET', 200],
      ['/v1/latency/regions/wnam/probe', {}, '/v1/latency/regions/:region/probe', 'GET', 503],
      ['/v1/speed-test/configuration', {}, '/v1/speed-test/configuration', 'GET', 200],
      ['/v1/events', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: event }, '/v1/events', 'POST', 202],
      ['/v1/openapi.json', {}, '/v1/openapi.json', 'GET', 200],
      ['/__down?bytes=1000', {}, '/__down', 'GET', 200],
      ['/__up', { method: 'POST', body: 'x'.repeat(1000) }, '/__up', 'POST', 200],
      ['/no/such/path', {}, 'unmatched', 'GET', 404],
    ];
    for (const [path, init, , , status] of traffic) expect({ path, status: (await call(path, init)).status }).toEqual({ path, status });
    const after = await scrape();
    // Before the traffic a series may not exist yet.
    const moved = (labels: Record<string, string>) => value(after, 'netdiag_http_requests_total', labels) - valueOr0(before, 'netdiag_http_requests_total', labels);
    for (const [path, , route, method, status] of traffic) {
      const expected = traffic.filter(([, , r, m, s]) => r === route && m === method && s === status).length;
      expect({ path, moved: moved({ route, method, status: String(status) }) }).toEqual({ path, moved: expected });
    }
    expect(value(after, 'netdiag_http_request_duration_seconds_count', { route: '/v1/dns/resolve' })).toBe(3);

    // The first lookup of the name missed, the second hit; a refused name never reaches the cache.
    expect(value(after, 'netdiag_dns_cache_lookups_total', { result: 'miss' })).toBe(1);
    expect(value(after, 'netdiag_dns_cache_lookups_total', { result: 'hit' })).toBe(1);
    expect(value(after, 'netdiag_dns_upstream_lookups_total', { outcome: 'answer' })).toBeGreaterThanOrEqual(1);
    expect(value(after, 'netdiag_dns_upstream_duration_seconds_count')).toBeGreaterThanOrEqual(1);
    expect(value(after, 'netdiag_dns_cache_entries')).toBe(1);
    expect(value(after, 'netdiag_dns_cache_bytes')).toBeGreaterThan(0);
    expect(value(after, 'netdiag_dns_circuit_open')).toBe(0);
    expect(value(after, 'netdiag_rate_limit_store', { store: 'local' })).toBe(1);
    expect(value(after, 'netdiag_rate_limit_store', { store: 'shared' })).toBe(0);
    expect(value(after, 'netdiag_probe_rtt_seconds_count', { region: 'weur' })).toBe(1);
    expect(value(after, 'netdiag_probe_up', { region: 'weur' })).toBe(1);
    expect(value(after, 'netdiag_events_accepted_total')).toBe(1);
    // Process metrics come from prom-client's defaults.
    expect(value(after, 'process_cpu_seconds_total')).toBeGreaterThan(0);
    expect(value(after, 'nodejs_eventloop_lag_seconds')).toBeGreaterThanOrEqual(0);

    expect(await eventually(async () => value(await scrape(), 'netdiag_events_delivered_total') === 1, 10_000)).toBe(true);
    const delivered = await scrape();
    expect(value(delivered, 'netdiag_events_queue_depth')).toBe(0);
    expect(value(delivered, 'netdiag_events_dropped_total')).toBe(0);

    // Past the ip limit (12 a minute; `/` and /v1/ip above used two): 15 in all, 3 refused, counted by operation.
    for (let i = 0; i < 13; i++) await call('/v1/ip');
    const limited = await scrape();
    expect(value(limited, 'netdiag_rate_limited_total', { operation: 'ip' })).toBe(3);
    expect(value(limited, 'netdiag_rate_limited_total', { operation: 'dns' })).toBe(0);
    expect(value(limited, 'netdiag_http_requests_total', { route: '/v1/ip', status: '429' })).toBe(3);
  });

  it('holds no address, name asked about, User-Agent or body, whatever the traffic carried', async () => {
    const address = '198.51.100.77';
    const agent = 'Distinctive-Agent/9.9 (metrics privacy check)';
    const headers = { 'X-Forwarded-For': address, 'User-Agent': agent };
    await call('/v1/ip', { headers });
    await call('/v1/dns/resolve?name=secret-label.example.test&type=TXT', { headers });
    await call('/v1/dns/resolve?name=another-secret.invalid&type=MX', { headers });
    await call('/v1/events', { method: 'POST', headers: { ...headers, 'Content-Type': 'application/json' }, body: '{"event":"private-body-marker"}' });
    await call('/private-path-marker?q=private-query-marker', { headers });
    await call('/v1/latency/regions/private-region-marker/probe', { headers });
    const res = await fetch(metricsUrl);
    const text = await res.text();
    for (const secret of [address, '198.51.100', agent, 'Distinctive', 'secret-label', 'another-secret', 'private-body-marker', 'private-path-marker', 'private-query-marker', 'private-region-marker', '127.0.0.1']) {
      expect({ secret, found: text.includes(secret) }).toEqual({ secret, found: false });
    }
    // An unknown method is `other`, not the client's text.
    await call('/v1/health', { method: 'PROPFIND' });
    const samples = parse(await (await fetch(metricsUrl)).text());
    expect(value(samples, 'netdiag_http_requests_total', { route: '/v1/health', method: 'other', status: '405' })).toBe(1);
    expect(samples.some((s) => s.labels.method === 'PROPFIND')).toBe(false);
  });

  it('serves only GET and HEAD of /metrics', async () => {
    const base = metricsUrl.replace(/\/metrics$/, '');
    expect((await fetch(`${base}/`)).status).toBe(404);
    expect((await fetch(metricsUrl, { method: 'POST' })).status).toBe(405);
    expect((await fetch(metricsUrl, { method: 'HEAD' })).status).toBe(200);
  });
});

/** Listening TCP sockets of a process, from `ss`. */
function listeningPorts(pid: number): number[] {
  const out = execFileSync('ss', ['-Hltnp'], { encoding: 'utf8' });
  return out
    .split('\n')
    .filter((line) => line.includes(`pid=${String(pid)},`))
    // The fourth column is the local address and port.
    .map((line) => Number(/:(\d+)$/.exec(line.split(/\s+/)[3] ?? '')?.[1]));
}

describe.skipIf(!ready)('the metrics listener as a process', () => {
  it("the primary thread serves the sum of its worker threads' metrics, the process's own figures once", async () => {
    const metricsPort = await freePort();
    const serving = await serveCli({ NETDIAG_WORKERS: '2', NETDIAG_METRICS_PORT: String(metricsPort) });
    try {
      // Separate connections, so the kernel spreads them over both threads.
      const requests = 40;
      for (let i = 0; i < requests; i++) {
        const res = await fetch(`http://127.0.0.1:${String(serving.port)}/v1/health`, { headers: { Connection: 'close' } });
        expect(res.status).toBe(200);
      }
      const samples = parse(await (await fetch(`http://127.0.0.1:${String(metricsPort)}/metrics`)).text());
      expect(value(samples, 'netdiag_http_requests_total', { route: '/v1/health', status: '200' })).toBe(requests);
      // Each thread reports the table they share.
      expect(value(samples, 'netdiag_rate_limit_store', { store: 'shared' })).toBe(2);
      // Resident memory and CPU are the process's, the same in every thread: one thread's value,
      // not the sum (which would read twice what the kernel says).
      const pid = serving.child.pid ?? 0;
      const rss = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${String(pid)}/status`, 'utf8'))?.[1]) * 1024;
      const reported = value(samples, 'process_resident_memory_bytes');
      expect(reported).toBeGreaterThan(rss * 0.7);
      expect(reported).toBeLessThan(rss * 1.3);
      const [utime, stime] = readFileSync(`/proc/${String(pid)}/stat`, 'utf8').split(') ')[1]?.split(' ').slice(11, 13).map(Number) ?? [];
      const cpu = ((utime ?? 0) + (stime ?? 0)) / 100;
      expect(value(samples, 'process_cpu_seconds_total')).toBeLessThan(cpu * 1.3 + 0.1);
      // Only the primary listens on the metrics port.
      expect(listeningPorts(pid)).toContain(metricsPort);
    } finally {
      serving.child.kill('SIGTERM');
      await serving.exited;
    }
  }, 30_000);

  it('is absent when NETDIAG_METRICS_PORT is unset, and present when set', async () => {
    const plain = await serveCli();
    try {
      expect(listeningPorts(plain.child.pid ?? 0)).toEqual([plain.port]);
      expect(plain.stdout()).not.toContain('metrics listening');
    } finally {
      plain.child.kill('SIGTERM');
      await plain.exited;
    }
    const metricsPort = await freePort();
    const withMetrics = await serveCli({ NETDIAG_METRICS_PORT: String(metricsPort) });
    try {
      expect(listeningPorts(withMetrics.child.pid ?? 0).sort()).toEqual([withMetrics.port, metricsPort].sort());
    } finally {
      withMetrics.child.kill('SIGTERM');
      await withMetrics.exited;
    }
  });

  it.each([
    [{ NETDIAG_METRICS_PORT: '70000' }, 'NETDIAG_METRICS_PORT'],
    [{ NETDIAG_METRICS_PORT: 'ninety' }, 'NETDIAG_METRICS_PORT'],
    [{ NETDIAG_METRICS_PORT: '8080', PORT: '8080' }, 'NETDIAG_METRICS_PORT'],
    [{ NETDIAG_METRICS_PORT: '9464', NETDIAG_METRICS_HOST: 'not a host!' }, 'NETDIAG_METRICS_HOST'],
    [{ NETDIAG_METRICS_HOST: '127.0.0.1' }, 'NETDIAG_METRICS_HOST'],
  ])('a bad setting stops start-up naming it: %o', async (env, variable) => {
    const run = await runCli(['serve'], { PORT: '0', HOST: '127.0.0.1', ...env });
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split('\n')).toEqual([expect.stringMatching(new RegExp(`^netdiag: invalid ${variable}: `))]);
  });

  it('a metrics port already taken stops start-up saying which', async () => {
    const taken = createServer().listen(0, '127.0.0.1');
    await once(taken, 'listening');
    const port = (taken.address() as { port: number }).port;
    try {
      const run = await runCli(['serve'], { PORT: '0', HOST: '127.0.0.1', NETDIAG_METRICS_PORT: String(port) });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`the metrics listener could not open 127.0.0.1:${String(port)}: EADDRINUSE`);
    } finally {
      taken.close();
    }
  });
});
