// npm run bench:dns-transports [-- --queries 20000 --concurrency 32 --rounds 5]
//
// What one upstream query costs this process, per transport: a socket per query over
// UDP (RFC 5452's fresh port), the shared long-lived UDP sockets, a TCP connection per query, and
// DoH over undici's kept-alive connections. Each transport is driven directly (no resolver, no
// HTTP server in front) with a distinct PTR question per query against the local benchmark
// upstream, in interleaved rounds; the figure is this process's utime+stime per query, with
// queries/s beside it. The upstream runs in its own processes and is not counted.
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { median, publicCaller, startChild } from './lib.mjs';

const { values: opts } = parseArgs({
  options: {
    queries: { type: 'string', default: '20000' },
    concurrency: { type: 'string', default: '32' },
    rounds: { type: 'string', default: '5' },
  },
});
const queries = Number(opts.queries);
const concurrency = Number(opts.concurrency);
const rounds = Number(opts.rounds);

const dist = (path) => new URL(`../dist/${path}`, import.meta.url).href;
const { udpTransport } = await import(dist('runtime/node/ports/dns-transport/udp.js'));
const { sharedUdpTransport } = await import(dist('runtime/node/ports/dns-transport/udp-shared.js'));
const { tcpTransport } = await import(dist('runtime/node/ports/dns-transport/tcp.js'));
const { pipelinedTcpTransport } = await import(dist('runtime/node/ports/dns-transport/tcp-pipelined.js'));
const { dohTransport } = await import(dist('engines/dns/doh.js'));
const { encodeQuery } = await import(dist('engines/dns/wire.js'));
const { Deadline } = await import(dist('core/ports/dns-transport.js'));
const { reverseName } = await import(dist('engines/dns/names.js'));

const upstreamScript = fileURLToPath(new URL('./dns-upstream.mjs', import.meta.url));
const start = (...args) => startChild(process.execPath, [upstreamScript, ...args], {}, (line) => Number(line));
const [udp, tcp, doh] = await Promise.all([start(), start('--tcp'), start('--doh')]);

const perQueryUdp = udpTransport('127.0.0.1', udp.port);
const transports = {
  'udp, a socket per query': perQueryUdp,
  'udp, shared sockets': sharedUdpTransport('127.0.0.1', udp.port, perQueryUdp),
  'tcp, a connection per query': tcpTransport('127.0.0.1', tcp.port),
  'tcp, one pipelined connection': pipelinedTcpTransport('127.0.0.1', tcp.port, tcpTransport('127.0.0.1', tcp.port), 2000),
  'doh, kept-alive connections': dohTransport(`http://127.0.0.1:${doh.port}/dns-query`),
};

async function run(transport) {
  // Questions made before the clock starts: their cost is the resolver's, not the transport's.
  const questions = Array.from({ length: queries }, () => encodeQuery(reverseName(publicCaller()), 'PTR'));
  let next = 0;
  let failed = 0;
  const worker = async () => {
    while (next < questions.length) {
      const query = questions[next++];
      const deadline = new Deadline(2000);
      try {
        await transport.exchange(query, deadline);
      } catch {
        failed += 1;
      } finally {
        deadline.clear();
      }
    }
  };
  const cpu = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (performance.now() - t0) / 1000;
  const used = process.cpuUsage(cpu);
  return { qps: queries / seconds, cpuUs: (used.user + used.system) / queries, failed };
}

const results = Object.fromEntries(Object.keys(transports).map((name) => [name, []]));
for (const transport of Object.values(transports)) await run(transport); // warm-up
for (let round = 0; round < rounds; round++) {
  for (const [name, transport] of Object.entries(transports)) results[name].push(await run(transport));
}
await Promise.all([udp.stop(), tcp.stop(), doh.stop()]);

console.log(`\n${rounds} interleaved rounds of ${queries} PTR queries, ${concurrency} in flight, medians:`);
console.table(
  Object.entries(results).map(([name, runs]) => ({
    transport: name,
    'cpu µs/query': Number(median(runs.map((r) => r.cpuUs)).toFixed(1)),
    'queries/s': Math.round(median(runs.map((r) => r.qps))),
    failed: runs.reduce((a, r) => a + r.failed, 0),
  })),
);
