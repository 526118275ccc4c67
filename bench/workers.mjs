// CPU time per request inside workerd beside Node: the same routes, the same local
// peers, in interleaved rounds. The Worker is the bundle wrangler deploys, served by workerd alone
// (bench/workerd-host.mjs: no dev proxy, Durable Objects in memory in the same process), and a
// bare Worker in a workerd of its own answers a constant body as the baseline; the figures are
// the CPU of each workerd process (utime + stime) over the requests it completed. request.cf is
// sent in workerd's cf-blob header as the edge would set it. Node is `netdiag serve`, one process. Rate limits are set far
// above the load; the limiter is a Durable Object counter (the Workers default) on one side and
// the in-process store on the other, as each runtime ships. Every request comes from a new public
// caller (Node hears it from a trusted proxy, Workers from the platform's CF-Connecting-IP), so
// each pays for its own limiter window and its own reverse lookup, as real traffic does.
// Usage: npm run bench:workers [-- --rounds 3 --duration 5 --connections 16]
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { cpuSeconds, listeningPort, load, median, startChild } from './lib.mjs';

const { values: opts } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '16' },
  },
});
const rounds = Number(opts.rounds);
const duration = Number(opts.duration);
const connections = Number(opts.connections);
const cli = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
const HIGH = 100_000_000;
const LIMITS = `ip=${HIGH},dns=${HIGH},probe=${HIGH},events=${HIGH}`;
const EVENT = JSON.stringify({
  event: 'speed_test_completed',
  event_id: '3b241101-e2bb-4255-8caf-4136c566a962',
  properties: { source: 'cli', mode: 'full', download_mbps: 412.5, upload_mbps: 38.2, latency_ms: 11.4, jitter_ms: 1.2, tool_version: '1.4.0' },
});
const ROUTES = [
  { name: 'health', path: '/v1/health' },
  { name: 'dns-cached', path: '/v1/dns/resolve?name=cached.bench.test&type=A' },
  { name: 'ip', path: '/v1/ip' },
  { name: 'events', path: '/v1/events', method: 'POST', headers: { 'Content-Type': 'application/json' }, body: EVENT },
];

/** Every process below `pid` whose command is workerd. */
function workerdPids(pid) {
  const found = [];
  const walk = (p) => {
    let children = [];
    try {
      children = readFileSync(`/proc/${p}/task/${p}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
    } catch {
      return;
    }
    for (const child of children) {
      try {
        if (readFileSync(`/proc/${child}/comm`, 'utf8').trim() === 'workerd') found.push(child);
      } catch {
        // gone
      }
      walk(child);
    }
  };
  walk(pid);
  return found;
}

const dnsScript = fileURLToPath(new URL('./dns-upstream.mjs', import.meta.url));
const collectorScript = fileURLToPath(new URL('./collector.mjs', import.meta.url));
const hostScript = fileURLToPath(new URL('./workerd-host.mjs', import.meta.url));
const udp = await startChild(process.execPath, [dnsScript], {}, (line) => Number(line));
const doh = await startChild(process.execPath, [dnsScript, '--doh'], {}, (line) => Number(line));
const collector = await startChild(process.execPath, [collectorScript, 'accept'], {}, (line) => Number(line));
const collectorUrl = `http://127.0.0.1:${collector.port}/ingest`;

const node = await startChild(
  process.execPath,
  [cli, 'serve'],
  { PORT: '0', HOST: '127.0.0.1', NETDIAG_RATE_LIMITS: LIMITS, NETDIAG_DNS_UPSTREAM: `udp://127.0.0.1:${udp.port}`, NETDIAG_TRUST_PROXY: 'loopback', NETDIAG_EVENTS_SINK: collectorUrl },
  listeningPort,
);

const vars = {
  NETDIAG_RATE_LIMITS: LIMITS,
  NETDIAG_DNS_UPSTREAM: `http://127.0.0.1:${doh.port}/dns-query`,
  NETDIAG_EVENTS_SINK: collectorUrl,
  NETDIAG_RATE_LIMIT_KEY: 'bench-key-bench-key-bench-key-bench-key',
  NETDIAG_LIMITER: 'durable-object',
};
const CF = JSON.stringify({ colo: 'DFW', city: 'Austin', region: 'Texas', country: 'US', postalCode: '78701', timezone: 'America/Chicago', latitude: '30.27130', longitude: '-97.74260', asn: 395747, asOrganization: 'Example', httpProtocol: 'HTTP/1.1', tlsVersion: 'TLSv1.3' });
const port = (line) => (/^[0-9]+$/.test(line) ? Number(line) : undefined);
const host = await startChild(process.execPath, [hostScript], { NETDIAG_BENCH_VARS: JSON.stringify(vars) }, port);
const workersPort = host.port;
const bare = await startChild(process.execPath, [hostScript, 'bare'], {}, port);
const bareWorkerd = workerdPids(bare.child.pid);
const bareCpu = () => bareWorkerd.reduce((sum, pid) => sum + cpuSeconds(pid), 0);
const workerd = workerdPids(host.child.pid);
if (workerd.length === 0 || bareWorkerd.length === 0) throw new Error('no workerd process found under the hosts');
const workerdCpu = () => workerd.reduce((sum, pid) => sum + cpuSeconds(pid), 0);
console.log(`node ${process.version}; workerd processes ${workerd.join(', ')}; ${rounds} rounds of ${duration} s, ${connections} connections`);

/** A load run against a target whose CPU is read by `cpu()`; returns µs per request and rps. */
async function run(url, route, headers, callerHeader, cpu) {
  const before = cpu();
  const result = await load({ url, method: route.method, headers: { ...route.headers, ...headers }, body: route.body, pid: node.child.pid, duration, connections, callerHeader });
  const used = cpu() - before;
  const completed = result.ok + result.bad;
  if (result.bad > 0) console.warn(`  ${route.name} at ${url}: ${result.bad} answers not 2xx`);
  return { rps: result.rps, cpuUs: (used * 1e6) / completed };
}

const rows = [];
for (const route of ROUTES) {
  const n = { rps: [], cpu: [] };
  const w = { rps: [], cpu: [] };
  const z = { rps: [], cpu: [] };
  for (let i = 0; i < rounds; i++) {
    const c = await run(`http://127.0.0.1:${bare.port}${route.path}`, { ...route, name: 'bare' }, { 'cf-blob': CF }, 'CF-Connecting-IP', bareCpu);
    z.rps.push(c.rps);
    z.cpu.push(c.cpuUs);
    const a = await run(`http://127.0.0.1:${node.port}${route.path}`, route, {}, 'X-Forwarded-For', () => cpuSeconds(node.child.pid));
    const b = await run(`http://127.0.0.1:${workersPort}${route.path}`, route, { 'cf-blob': CF }, 'CF-Connecting-IP', workerdCpu);
    n.rps.push(a.rps);
    n.cpu.push(a.cpuUs);
    w.rps.push(b.rps);
    w.cpu.push(b.cpuUs);
  }
  rows.push({
    route: route.name,
    'node µs CPU/req': Number(median(n.cpu).toFixed(1)),
    'workerd µs CPU/req': Number(median(w.cpu).toFixed(1)),
    'bare Worker µs CPU/req': Number(median(z.cpu).toFixed(1)),
    'netdiag in workerd µs/req': Number((median(w.cpu) - median(z.cpu)).toFixed(1)),
    'node req/s': Math.round(median(n.rps)),
    'workerd req/s': Math.round(median(w.rps)),
  });
}
console.table(rows);

for (const child of [host, bare, node, collector, doh, udp]) await child.stop();
process.exit(0);
