// What /metrics costs (issue 17): the same service with and without NETDIAG_METRICS_PORT, in
// interleaved rounds, on the cheapest route (health: the recording is the largest share of its
// work), cached DNS and /v1/ip with a new public caller per request. A scrape every second
// during the metrics rounds, as a Prometheus with a short interval would. CPU per request from
// the server's utime + stime, medians.
// Part of `npm run bench` (`--only metrics` alone); with its own options: node bench/metrics.mjs
// [--rounds 5 --duration 5 --connections 32].
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { listeningPort, load, median, startChild } from './lib.mjs';

const cli = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
const upstreamScript = fileURLToPath(new URL('./dns-upstream.mjs', import.meta.url));

export async function runMetrics({ rounds = 5, durationS = 5, connections = 32 } = {}) {
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
  const plain = await startChild(process.execPath, [cli, 'serve'], env, listeningPort);
  const metered = await startChild(process.execPath, [cli, 'serve'], { ...env, NETDIAG_METRICS_PORT: String(metricsPort) }, listeningPort);
  const routes = [
    { name: 'health', path: '/v1/health' },
    { name: 'dns-cached', path: '/v1/dns/resolve?name=cached.bench.test&type=A' },
    { name: 'ip (distinct callers)', path: '/v1/ip', callerHeader: 'x-forwarded-for' },
  ];
  const rows = [];
  for (const route of routes) {
    const off = { rps: [], cpu: [] };
    const on = { rps: [], cpu: [] };
    for (let i = 0; i < rounds; i++) {
      for (const [server, into, scrape] of [[plain, off, false], [metered, on, true]]) {
        const scraper = scrape ? setInterval(() => void fetch(`http://127.0.0.1:${metricsPort}/metrics`).then((r) => r.text()), 1000) : undefined;
        const r = await load({ url: `http://127.0.0.1:${server.port}${route.path}`, pid: server.child.pid, duration: durationS, connections, callerHeader: route.callerHeader });
        clearInterval(scraper);
        if (r.bad > 0) throw new Error(`${route.name}: ${r.bad} failed requests`);
        into.rps.push(r.rps);
        into.cpu.push(r.cpuUsPerReq);
      }
    }
    rows.push({
      route: route.name,
      'rps off': Math.round(median(off.rps)),
      'rps on': Math.round(median(on.rps)),
      'CPU µs/req off': Number(median(off.cpu).toFixed(1)),
      'CPU µs/req on': Number(median(on.cpu).toFixed(1)),
      'metrics µs/req': Number((median(on.cpu) - median(off.cpu)).toFixed(1)),
    });
  }
  console.log(`metrics on and off: ${rounds} interleaved rounds of ${durationS} s, ${connections} connections, medians; a scrape each second while on`);
  console.table(rows);
  for (const child of [plain, metered]) await child.stop();
  await upstream.stop();
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { rounds: { type: 'string', default: '5' }, duration: { type: 'string', default: '5' }, connections: { type: 'string', default: '32' } } });
  await runMetrics({ rounds: Number(values.rounds), durationS: Number(values.duration), connections: Number(values.connections) });
  process.exit(0);
}
