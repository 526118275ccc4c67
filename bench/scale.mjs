// Scaling out: the same routes against one process, against NETDIAG_WORKERS=2, each with the
// in-process limiter and with Redis (when redis-server is installed), as ratios to the bare
// baseline; and the latency the Redis store adds to a limited request, from sequential
// requests timed one by one (µs resolution, unlike autocannon's millisecond histogram).
import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect, createServer } from 'node:net';
import { load, median, sequentialLatency } from './lib.mjs';

async function freePort() {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address();
  server.close();
  await once(server, 'close');
  return port;
}

function reachable(port) {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.end();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

/** A throwaway redis-server, or undefined when it is not installed. */
async function startRedis() {
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  let missing = false;
  child.on('error', () => (missing = true));
  for (let i = 0; i < 100 && !missing; i++) {
    if (await reachable(port)) return { url: `redis://127.0.0.1:${port}`, stop: async () => { child.kill('SIGTERM'); await once(child, 'exit'); } };
    await new Promise((r) => setTimeout(r, 50));
  }
  if (!missing) child.kill('SIGKILL');
  return undefined;
}

export async function runScale({ startService, baselineFor, routes, duration, rounds, connections }) {
  const redis = await startRedis();
  if (redis === undefined) console.log('\n*** redis-server not installed: the Redis rows are skipped (apt-get install redis-server) ***');
  // Redis requires the deployment's rate-limit key (docs/api.md); any value will do here.
  const key = randomBytes(32).toString('base64');
  const setups = [
    { name: '1 process', env: {} },
    { name: '2 workers', env: { NETDIAG_WORKERS: '2' } },
    ...(redis ? [
      { name: '1 process + Redis', env: { NETDIAG_REDIS_URL: redis.url, NETDIAG_RATE_LIMIT_KEY: key } },
      { name: '2 workers + Redis', env: { NETDIAG_REDIS_URL: redis.url, NETDIAG_RATE_LIMIT_KEY: key, NETDIAG_WORKERS: '2' } },
    ] : []),
  ];
  const rows = [];
  const latency = [];
  for (const route of routes) {
    const probe = await startService({});
    const size = (await (await fetch(`http://127.0.0.1:${probe.port}${route.path}`, { headers: route.headers })).arrayBuffer()).byteLength;
    await probe.stop();
    const baseline = await baselineFor(size);
    const services = [];
    for (const setup of setups) services.push({ setup, service: await startService(setup.env) });
    const base = [];
    const runs = new Map(setups.map((s) => [s.name, []]));
    for (let i = 0; i < rounds; i++) {
      base.push(await load({ url: `http://127.0.0.1:${baseline.port}/`, pid: baseline.child.pid, duration, connections }));
      for (const { setup, service } of services) {
        runs.get(setup.name).push(await load({ url: `http://127.0.0.1:${service.port}${route.path}`, headers: route.headers, pid: service.child.pid, duration, connections, tree: true }));
      }
    }
    const baseRps = median(base.map((r) => r.rps));
    for (const { setup, service } of services) {
      const r = runs.get(setup.name);
      rows.push({
        route: route.path,
        setup: setup.name,
        'rps': Math.round(median(r.map((x) => x.rps))),
        'ratio to bare': Number((median(r.map((x) => x.rps)) / baseRps).toFixed(2)),
        'p99 ms (load)': median(r.map((x) => x.p99)),
        'cpu µs/req (all processes)': Number(median(r.map((x) => x.cpuUsPerReq)).toFixed(1)),
        'non-2xx/errors': r.reduce((a, x) => a + x.bad, 0),
      });
      if (route.limited && !setup.env.NETDIAG_WORKERS) {
        const seq = await sequentialLatency(`http://127.0.0.1:${service.port}${route.path}`, 3000, route.headers);
        latency.push({ route: route.path, setup: setup.name, 'p50 µs': Math.round(seq.p50 * 1000), 'p99 µs': Math.round(seq.p99 * 1000) });
      }
      await service.stop();
    }
    await baseline.stop();
  }
  await redis?.stop();
  console.log(`\nScaling out (${rounds} interleaved rounds of ${duration}s, ${connections} connections; the bare baseline is one process):`);
  console.table(rows);
  console.log('Latency of single sequential requests on a limited route (3000 each): what the Redis store adds:');
  console.table(latency);
}
