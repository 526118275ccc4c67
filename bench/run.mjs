// npm run bench [-- --duration 5 --rounds 3 --floor-rounds 5 --connections 32 --only health,dns-cached,ip,ip-tcp,ip-one-caller,mixed-memory]
//                [--node-options="--max-semi-space-size=4 --heap-growing-percent=20"]  (Node flags for the baseline, floor and service alike)
//
// Each route is measured against a bare node:http server that returns a body of the same size.
// Baseline and service runs are interleaved round by round and medians reported, because this
// machine's throughput swings with its neighbours; the server's CPU time per request (utime +
// stime from /proc over the completed requests) is printed beside requests/s as the steadier
// figure. Rate limits are raised through NETDIAG_RATE_LIMITS with the limiter still active.
//
// Two routes are also set against a floor (ip-floor.mjs, events-floor.mjs): a hand-written server
// doing only the work the route must do. The floor runs in the same rounds, between the baseline
// and the service, and the CPU a request costs the service over what it costs the floor is the
// goal's figure (docs/benchmarks.md, "Floors"). Those two routes run `--floor-rounds` rounds (at
// least `--rounds`): a route's goal there is a ratio of two noisy figures, and in one run of three
// rounds each round's ratio read 1.03-1.20 (docs/benchmarks.md, "Five rounds for the floors").
//
// Both sides of a route start as fresh processes and are measured twice: fresh, then aged, after
// both have been put through the same forced major collections (force-gc.cjs says why that
// matters: every Node 20 http server, the bare one included, costs 3-4 µs more per request once
// V8 has dropped the maps its first optimized code relied on).
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { load, median, rssMiB, startChild } from './lib.mjs';
import { runScale } from './scale.mjs';
import { runStartup } from './startup.mjs';
import { runTargets } from './targets.mjs';
import { runMetrics } from './metrics.mjs';
import { runMixedMemory } from './mixed-memory.mjs';

const { values: opts } = parseArgs({
  options: {
    duration: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    'floor-rounds': { type: 'string', default: '5' },
    connections: { type: 'string', default: '32' },
    only: { type: 'string' },
    'node-options': { type: 'string' },
  },
});
const duration = Number(opts.duration);
const rounds = Number(opts.rounds);
const floorRounds = Math.max(rounds, Number(opts['floor-rounds']));
const connections = Number(opts.connections);

const cli = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
const baselineScript = fileURLToPath(new URL('./baseline-server.mjs', import.meta.url));
const upstreamScript = fileURLToPath(new URL('./dns-upstream.mjs', import.meta.url));
const HIGH = 100_000_000; // the most NETDIAG_RATE_LIMITS accepts

const forceGc = fileURLToPath(new URL('./force-gc.cjs', import.meta.url));
/**
 * An operator's Node flags (docs/operations.md, "Memory"), given to the baseline, the floor and
 * the service alike: the same runtime on every side of the comparison. On the command line, not
 * in NODE_OPTIONS, which refuses V8 flags outside Node's list (`--heap-growing-percent`).
 */
const OPERATOR_FLAGS = (opts['node-options'] ?? '').split(' ').filter(Boolean);
const NODE_FLAGS = ['--expose-gc', '-r', forceGc, ...OPERATOR_FLAGS];
const collectorScript = fileURLToPath(new URL('./collector.mjs', import.meta.url));
const ipFloorScript = fileURLToPath(new URL('./ip-floor.mjs', import.meta.url));
const eventsFloorScript = fileURLToPath(new URL('./events-floor.mjs', import.meta.url));
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
  // Public callers behind a trusted proxy, a new one per request as real traffic comes (issue
  // 18): geo and ASN lookups, a limiter window and an uncached PTR query each time.
  { name: 'ip', path: '/v1/ip', callerHeader: 'X-Forwarded-For', goal: 0.4, floor: { script: ipFloorScript, peer: 'upstream', cpuGoal: 1.15 } },
  // The same over tcp:// to the same kind of local resolver: one pipelined connection.
  { name: 'ip-tcp', path: '/v1/ip', callerHeader: 'X-Forwarded-For', upstream: 'tcp', goal: 0.4 },
  // One caller for every request: PTR queries in flight are shared (about 31 requests a query).
  { name: 'ip-one-caller', path: '/v1/ip', headers: { 'X-Forwarded-For': '8.8.8.8' } },
  // Analytics intake from many callers with the HTTP sink pointed at a local collector that
  // answers, and again at one that never answers: the 202 must not wait on either.
  { name: 'events', path: '/v1/events', method: 'POST', headers: { 'Content-Type': 'application/json' }, body: EVENT, callerHeader: 'X-Forwarded-For', collector: 'accept', goal: 0.6, floor: { script: eventsFloorScript, peer: 'collector', cpuGoal: 1.2 } },
  { name: 'events-hanging', path: '/v1/events', method: 'POST', headers: { 'Content-Type': 'application/json' }, body: EVENT, callerHeader: 'X-Forwarded-For', collector: 'hang' },
].filter((r) => opts.only === undefined || opts.only.split(',').includes(r.name));

/** How a route is named in the tables. */
function labelOf(route) {
  if (route.collector !== undefined) return `${route.method} ${route.path} (collector ${route.collector})`;
  if (route.callerHeader !== undefined) return `${route.path} (a new caller each request${route.upstream === 'tcp' ? ', tcp://' : ''})`;
  if (route.headers?.['X-Forwarded-For'] !== undefined) return `${route.path} (one caller)`;
  return route.path;
}

async function startService(env = {}) {
  return startChild(
    process.execPath,
    [...NODE_FLAGS, cli, 'serve'],
    {
      PORT: '0',
      HOST: '127.0.0.1',
      NETDIAG_RATE_LIMITS: `ip=${HIGH},dns=${HIGH},probe=${HIGH},events=${HIGH}`,
      ...env,
    },
    (line) => {
      try {
        const entry = JSON.parse(line);
        // Worker threads are ready when their primary says so, after every one listens.
        const ready = entry.msg === 'listening' && (env.NETDIAG_WORKERS === undefined || entry.role === 'primary');
        return ready ? entry.port : undefined;
      } catch {
        return undefined;
      }
    },
  );
}

/** Puts a process through the forced collections of force-gc.cjs; gives it a moment after. */
async function age(target) {
  target.child.kill('SIGUSR2');
  await new Promise((resolve) => setTimeout(resolve, 500));
}

const upstream = await startChild(process.execPath, [upstreamScript], {}, (line) => Number(line));
const tcpUpstream = await startChild(process.execPath, [upstreamScript, '--tcp'], {}, (line) => Number(line));
const serviceEnv = { NETDIAG_DNS_UPSTREAM: `udp://127.0.0.1:${upstream.port}`, NETDIAG_TRUST_PROXY: 'loopback' };
const rows = [];
const floorRows = [];
const memory = [];
for (const route of ROUTES) {
  // Routes that need their own sink get a collector beside their service.
  const collector = route.collector === undefined ? undefined : await startChild(process.execPath, [collectorScript, route.collector], {}, (line) => Number(line));
  const target = await startService({
    ...serviceEnv,
    ...(route.upstream === 'tcp' ? { NETDIAG_DNS_UPSTREAM: `tcp://127.0.0.1:${tcpUpstream.port}` } : {}),
    ...(collector === undefined ? {} : { NETDIAG_EVENTS_SINK: `http://127.0.0.1:${collector.port}/ingest` }),
  });
  const rssAtStart = rssMiB(target.child.pid);
  const url = `http://127.0.0.1:${target.port}${route.path}`;
  const probe = await fetch(url, { method: route.method, headers: route.callerHeader === undefined ? route.headers : { [route.callerHeader]: '8.8.8.8' }, body: route.body });
  const size = (await probe.arrayBuffer()).byteLength;
  const baseline = await startChild(process.execPath, [...NODE_FLAGS, baselineScript, String(size)], {}, (line) => Number(line));
  // The floor talks to the same peer as the service: the DNS upstream, or this route's collector.
  const floorPeer = route.floor === undefined ? undefined : route.floor.peer === 'upstream' ? upstream.port : collector.port;
  const floor = route.floor === undefined ? undefined : await startChild(process.execPath, [...NODE_FLAGS, route.floor.script, '--serve', String(floorPeer)], {}, (line) => Number(line));
  const runs = { fresh: { base: [], floor: [], svc: [] }, aged: { base: [], floor: [], svc: [] } };
  for (const state of ['fresh', 'aged']) {
    if (state === 'aged') await Promise.all([age(baseline), age(target), ...(floor === undefined ? [] : [age(floor)])]);
    for (let i = 0; i < (route.floor === undefined ? rounds : floorRounds); i++) {
      // The baseline and the floor get the same requests (a new caller header each too), so the client's cost is the same.
      const same = { method: route.method, headers: route.headers, body: route.body, duration, connections, callerHeader: route.callerHeader };
      runs[state].base.push(await load({ ...same, url: `http://127.0.0.1:${baseline.port}/`, pid: baseline.child.pid }));
      if (floor !== undefined) runs[state].floor.push(await load({ ...same, url: `http://127.0.0.1:${floor.port}${route.path}`, pid: floor.child.pid }));
      runs[state].svc.push(await load({ ...same, url, pid: target.child.pid }));
    }
  }
  const label = labelOf(route);
  const rssAfterLoad = rssMiB(target.child.pid);
  // Then again after forced full collections: right after the load the figure depends on when V8
  // last collected (164 and 221 MiB in two runs of the same code under Node's defaults). So far the
  // two columns have read the same: V8 keeps the pages a collection frees, so what counts is how
  // large the heap was let grow (docs/operations.md, "Memory").
  await age(target);
  memory.push({ route: label, 'MiB after start': Number(rssAtStart.toFixed(1)), 'MiB after load': Number(rssAfterLoad.toFixed(1)), 'MiB after load, collected': Number(rssMiB(target.child.pid).toFixed(1)) });
  await baseline.stop();
  await floor?.stop();
  await target.stop();
  await collector?.stop();
  // Warnings and errors the service logged: a hanging collector's are expected, no others.
  for (const line of target.output) {
    try {
      if (['warn', 'error', 'fatal'].includes(JSON.parse(line).level)) console.log(`${route.name} service logged: ${line}`);
    } catch {
      console.log(`${route.name} service printed: ${line}`);
    }
  }
  if (route.collector === 'accept') {
    // Every event the service accepted must reach an answering collector, the final flush at
    // SIGTERM included. The floor delivers to the same collector: its runs are counted too.
    // autocannon counts the 202s it saw before each run stopped; the requests still in flight then
    // (up to one per connection) were accepted too, so the collector may hold a few more.
    const runsDone = [...runs.fresh.svc, ...runs.aged.svc];
    const floorRuns = [...runs.fresh.floor, ...runs.aged.floor];
    const counted = (probe.status === 202 ? 1 : 0) + [...runsDone, ...floorRuns].reduce((a, r) => a + r.ok, 0);
    const received = Number(/received (\d+)/.exec(collector.output.join('\n'))?.[1]);
    const verdict = received < counted ? ' *** NOT ALL DELIVERED ***' : received > counted + (runsDone.length + floorRuns.length) * connections ? ' *** MORE THAN WERE SENT: DUPLICATES ***' : '';
    console.log(`${route.name}: ${counted} events answered 202 within the runs, ${received} received by the collector${verdict}`);
  }
  const m = (list, key) => median(list.map((r) => r[key]));
  for (const state of ['fresh', 'aged']) {
    const { base, floor: floorRuns, svc } = runs[state];
    rows.push({
      route: label,
      state,
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
    if (floorRuns.length > 0) {
      floorRows.push({
        route: label,
        state,
        'rps floor': Math.round(m(floorRuns, 'rps')),
        'rps service': Math.round(m(svc, 'rps')),
        'cpu µs/req floor': Number(m(floorRuns, 'cpuUsPerReq').toFixed(1)),
        'cpu µs/req service': Number(m(svc, 'cpuUsPerReq').toFixed(1)),
        'cpu service/floor': Number((m(svc, 'cpuUsPerReq') / m(floorRuns, 'cpuUsPerReq')).toFixed(2)),
        'cpu goal': route.floor.cpuGoal,
        // Each round's service over the floor that ran just before it: what the neighbours' bursts
        // do to one round shows here, beside the medians the goal is read from.
        'rounds service/floor': svc.map((r, i) => (r.cpuUsPerReq / floorRuns[i].cpuUsPerReq).toFixed(2)).join(' '),
        'floor non-2xx/errors': floorRuns.reduce((a, r) => a + r.bad, 0),
      });
    }
  }
}
await upstream.stop();
await tcpUpstream.stop();
if (rows.length > 0) {
  console.log('\nResident memory of each route\'s service, as it listened and after its load:');
  console.table(memory);
  console.log(`\n${rounds} interleaved rounds of ${duration}s (${floorRounds} for the routes with a floor), ${connections} connections, medians; one row per route and state:`);
  console.table(rows);
  const missed = rows.filter((r) => r.goal !== '' && r.ratio < r.goal);
  if (missed.length > 0) console.log(`below goal: ${missed.map((r) => `${r.route} (${r.state})`).join(', ')}`);
  if (floorRows.length > 0) {
    console.log(`\nThe same rounds (${floorRounds} of them) against each floor (the work the route must do, hand-written), medians:`);
    console.table(floorRows);
    const over = floorRows.filter((r) => r['cpu service/floor'] > r['cpu goal']);
    if (over.length > 0) console.log(`over the floor goal: ${over.map((r) => `${r.route} (${r.state})`).join(', ')}`);
  }
}

if (opts.only === undefined || opts.only.split(',').includes('startup')) await runStartup({ cli });

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

// The speed-test targets: GB/s and CPU per GB against a bare server moving the same bytes.
if (opts.only === undefined || opts.only.split(',').includes('targets')) await runTargets({ rounds, durationS: duration });

// What /metrics costs: the same service with and without NETDIAG_METRICS_PORT.
if (opts.only === undefined || opts.only.split(',').includes('metrics')) await runMetrics({ rounds, durationS: duration });

// Resident memory after a minute of every route from distinct callers, bad input and a hanging
// collector, started as `npm start` starts the server (goal 130 MB, issue 54).
if (opts.only === undefined || opts.only.split(',').includes('mixed-memory')) await runMixedMemory();
