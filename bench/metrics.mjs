// What /metrics costs: the service with and without NETDIAG_METRICS_PORT, on the
// cheapest route (health: the recording is the largest share of its work), cached DNS, and
// /v1/ip with a new public caller per request, while something scrapes every second as a
// Prometheus with a short interval would. CPU per request from the server's utime + stime.
// Two processes of the same build, both without metrics, measured 25-36 µs apart per /v1/ip
// request (an A/A control; within 1 µs on health and cached DNS), so every round starts a fresh
// pair, in alternating order, and the figures are medians over rounds. On /v1/ip the effect is
// still smaller than that spread: docs/benchmarks.md gives a CPU profile's figure beside it.
// Part of `npm run bench` (`--only metrics` alone); with its own options: node bench/metrics.mjs
// [--rounds 6 --duration 4 --connections 32].
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { listeningPort, load, median, startChild } from './lib.mjs';

const cli = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
const upstreamScript = fileURLToPath(new URL('./dns-upstream.mjs', import.meta.url));

const ROUTES = [
  { name: 'health', path: '/v1/health' },
  { name: 'dns-cached', path: '/v1/dns/resolve?name=cached.bench.test&type=A' },
  { name: 'ip (distinct callers)', path: '/v1/ip', callerHeader: 'x-forwarded-for' },
];

export async function runMetrics({ rounds = 6, durationS = 4, connections = 32 } = {}) {
  const upstream = await startChild(process.execPath, [upstreamScript], {}, (line) => Number(line));
  const env = {
    PORT: '0',
    HOST: '127.0.0.1',
    NETDIAG_TRUST_PROXY: 'loopback',
    NETDIAG_RATE_LIMITS: 'ip=100000000,dns=100000000',
    NETDIAG_DNS_UPSTREAM: `udp://127.0.0.1:${upstream.port}`,
    NETDIAG_EVENTS_SINK: 'none',
  };
  const metricsPort = 19464;
  const figures = new Map(ROUTES.map((r) => [r.name, { off: { rps: [], cpu: [] }, on: { rps: [], cpu: [] } }]));
  for (let i = 0; i < rounds; i++) {
    const start = (metered) => startChild(process.execPath, [cli, 'serve'], metered ? { ...env, NETDIAG_METRICS_PORT: String(metricsPort) } : env, listeningPort);
    const order = i % 2 === 0 ? [false, true] : [true, false];
    const servers = [];
    for (const metered of order) servers.push({ metered, child: await start(metered) });
    for (const route of ROUTES) {
      for (const { metered, child } of servers) {
        const scraper = metered ? setInterval(() => void fetch(`http://127.0.0.1:${metricsPort}/metrics`).then((r) => r.text()), 1000) : undefined;
        const r = await load({ url: `http://127.0.0.1:${child.port}${route.path}`, pid: child.child.pid, duration: durationS, connections, callerHeader: route.callerHeader });
        clearInterval(scraper);
        if (r.bad > 0) throw new Error(`${route.name}: ${r.bad} failed requests`);
        const into = figures.get(route.name)[metered ? 'on' : 'off'];
        into.rps.push(r.rps);
        into.cpu.push(r.cpuUsPerReq);
      }
    }
    for (const { child } of servers) await child.stop();
  }
  const rows = ROUTES.map((route) => {
    const { off, on } = figures.get(route.name);
    return {
      route: route.name,
      'rps off': Math.round(median(off.rps)),
      'rps on': Math.round(median(on.rps)),
      'CPU µs/req off': Number(median(off.cpu).toFixed(1)),
      'CPU µs/req on': Number(median(on.cpu).toFixed(1)),
      'metrics µs/req': Number((median(on.cpu) - median(off.cpu)).toFixed(1)),
    };
  });
  console.log(`metrics on and off: ${rounds} rounds, a fresh pair of processes each (alternating order), ${durationS} s per route, ${connections} connections, medians; a scrape each second while on`);
  console.table(rows);
  await upstream.stop();
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { rounds: { type: 'string', default: '6' }, duration: { type: 'string', default: '4' }, connections: { type: 'string', default: '32' } } });
  await runMetrics({ rounds: Number(values.rounds), durationS: Number(values.duration), connections: Number(values.connections) });
  process.exit(0);
}
