// npm run bench [-- --duration 5 --rounds 3 --connections 32 --only health,dns-cached]
//
// Each route is measured against a bare node:http server that returns a body of the same size.
// Baseline and service runs are interleaved round by round and medians reported, because this
// machine's throughput swings with its neighbours; the server's CPU time per request (utime +
// stime from /proc over the completed requests) is printed beside requests/s as the steadier
// figure. Rate limits are raised through NETDIAG_RATE_LIMITS with the limiter still active.
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { load, median, rssMiB, startChild } from './lib.mjs';
import { runScale } from './scale.mjs';

const { values: opts } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    connections: { type: 'string', default: '32' },
    only: { type: 'string' },
  },
});
const duration = Number(opts.duration);
const rounds = Number(opts.rounds);
const connections = Number(opts.connections);

const cli = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
const baselineScript = fileURLToPath(new URL('./baseline-server.mjs', import.meta.url));
const upstreamScript = fileURLToPath(new URL('./dns-upstream.mjs', import.meta.url));
const HIGH = 999_999_999;

const collectorScript = fileURLToPath(new URL('./collector.mjs', import.meta.url));
const EVENT = JSON.stringify({
  event: 'speed_test_completed',
  event_id: '3b241101-e2bb-4255-8caf-4136c566a962',
  properties: { source: 'cli', mode: 'full', download_mbps: 412.5, upload_mbps: 38.2, latency_ms: 11.4, jitter_ms: 1.2, tool_version: '1.4.0' },
});

/** The routes under load. Each names the goal its issue set, as a ratio to the baseline. */
const ROUTES = [
  { name: 'health', path: '/v1/health', goal: 0.7 },
  { name: 'configuration', path: '/v1/speed-test/configuration' },
  { name: 'regions', path: '/v1/latency/regions' },
  { name: 'dns-cached', path: '/v1/dns/resolve?name=cached.bench.test&type=A', goal: 0.6 },
  // TTL 0: every request is a miss that goes to the local upstream and back.
  { name: 'dns-miss', path: '/v1/dns/resolve?name=miss.bench.test&type=A' },
  // A public caller behind a trusted proxy: geo and ASN lookups plus an uncached PTR query.
  { name: 'ip', path: '/v1/ip', headers: { 'X-Forwarded-For': '8.8.8.8' }, goal: 0.4 },
  // Analytics intake with the HTTP sink pointed at a local collector that answers, and again at
  // one that never answers: the 202 must not wait on either.
  { name: 'events', path: '/v1/events', method: 'POST', headers: { 'Content-Type': 'application/json' }, body: EVENT, collector: 'accept' },
  { name: 'events-hanging', path: '/v1/events', method: 'POST', headers: { 'Content-Type': 'application/json' }, body: EVENT, collector: 'hang' },
].filter((r) => opts.only === undefined || opts.only.split(',').includes(r.name));

async function startService(env = {}) {
  return startChild(
    process.execPath,
    [cli, 'serve'],
    { PORT: '0', HOST: '127.0.0.1', NETDIAG_RATE_LIMITS: `ip=${HIGH},dns=${HIGH},probe=${HIGH},events=${HIGH}`, ...env },
    (line) => {
      try {
        const entry = JSON.parse(line);
        // A cluster is ready when its primary says so, after every worker listens.
        const ready = entry.msg === 'listening' && (env.NETDIAG_WORKERS === undefined || entry.role === 'primary');
        return ready ? entry.port : undefined;
      } catch {
        return undefined;
      }
    },
  );
}

const upstream = await startChild(process.execPath, [upstreamScript], {}, (line) => Number(line));
const service = await startService({ NETDIAG_DNS_UPSTREAM: `udp://127.0.0.1:${upstream.port}`, NETDIAG_TRUST_PROXY: 'loopback' });
console.log(`service pid ${service.child.pid}, resident memory after start ${rssMiB(service.child.pid).toFixed(1)} MiB`);
const rows = [];
for (const route of ROUTES) {
  // Routes that need their own sink get their own service, with the collector beside it.
  const collector = route.collector === undefined ? undefined : await startChild(process.execPath, [collectorScript, route.collector], {}, (line) => Number(line));
  const target = collector === undefined ? service : await startService({ NETDIAG_EVENTS_SINK: `http://127.0.0.1:${collector.port}/ingest` });
  const url = `http://127.0.0.1:${target.port}${route.path}`;
  const probe = await fetch(url, { method: route.method, headers: route.headers, body: route.body });
  const size = (await probe.arrayBuffer()).byteLength;
  const baseline = await startChild(process.execPath, [baselineScript, String(size)], {}, (line) => Number(line));
  const base = [];
  const svc = [];
  for (let i = 0; i < rounds; i++) {
    base.push(await load({ url: `http://127.0.0.1:${baseline.port}/`, method: route.method, headers: route.headers, body: route.body, pid: baseline.child.pid, duration, connections }));
    svc.push(await load({ url, method: route.method, headers: route.headers, body: route.body, pid: target.child.pid, duration, connections }));
  }
  await baseline.stop();
  if (collector !== undefined) {
    await target.stop();
    await collector.stop();
  }
  const m = (runs, key) => median(runs.map((r) => r[key]));
  rows.push({
    route: route.collector === undefined ? route.path : `${route.method} ${route.path} (collector ${route.collector})`,
    bytes: size,
    'rps service': Math.round(m(svc, 'rps')),
    'rps baseline': Math.round(m(base, 'rps')),
    ratio: Number((m(svc, 'rps') / m(base, 'rps')).toFixed(2)),
    goal: route.goal ?? '',
    'p50 ms': m(svc, 'p50'),
    'p99 ms': m(svc, 'p99'),
    'cpu µs/req service': Number(m(svc, 'cpuUsPerReq').toFixed(1)),
    'cpu µs/req baseline': Number(m(base, 'cpuUsPerReq').toFixed(1)),
    'non-2xx/errors': svc.reduce((a, r) => a + r.bad, 0),
  });
}
console.log(`resident memory after load ${rssMiB(service.child.pid).toFixed(1)} MiB`);
await service.stop();
await upstream.stop();
console.log(`\n${rounds} interleaved rounds of ${duration}s, ${connections} connections, medians:`);
console.table(rows);
const missed = rows.filter((r) => r.goal !== '' && r.ratio < r.goal);
if (missed.length > 0) console.log(`below goal: ${missed.map((r) => r.route).join(', ')}`);

if (opts.only === undefined || opts.only.split(',').includes('scale')) {
  const scaleUpstream = await startChild(process.execPath, [upstreamScript], {}, (line) => Number(line));
  await runScale({
    startService: (env) => startService({ NETDIAG_DNS_UPSTREAM: `udp://127.0.0.1:${scaleUpstream.port}`, ...env }),
    baselineFor: (size) => startChild(process.execPath, [baselineScript, String(size)], {}, (line) => Number(line)),
    routes: [
      { path: '/v1/health' },
      { path: '/v1/dns/resolve?name=cached.bench.test&type=A', limited: true },
    ],
    duration,
    rounds,
    connections,
  });
  await scaleUpstream.stop();
}
