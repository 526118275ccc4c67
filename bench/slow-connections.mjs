// npm run bench:slow [-- --slow 2000 --seconds 30 --concurrency 16]
//
// Normal mixed traffic (bench/traffic.mjs) against `netdiag serve`, measured alone, then while
// `--slow` connections are held open against the same listener: half drip one header line a
// second (a slowloris), half connect and send nothing. Each one the server closes is opened
// again, so the load stays at `--slow` throughout. Prints the normal traffic's p50/p99 before
// and during, the service's CPU per request and RSS, and how long the server held each slow
// connection (the header deadline, NETDIAG_HEADERS_TIMEOUT_MS, bounds it).
import { connect } from 'node:net';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { cpuSeconds, listeningPort, rssMiB, startChild } from './lib.mjs';
import { percentile, runMix } from './traffic.mjs';

const { values: opts } = parseArgs({ options: { slow: { type: 'string', default: '2000' }, seconds: { type: 'string', default: '30' }, concurrency: { type: 'string', default: '16' } } });
const slowCount = Number(opts.slow);
const seconds = Number(opts.seconds);
const concurrency = Number(opts.concurrency);

const cli = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
const script = (name) => fileURLToPath(new URL(`./${name}`, import.meta.url));
const listening = listeningPort;
const upstream = await startChild(process.execPath, [script('dns-upstream.mjs')], {}, (line) => Number(line));
const probe = await startChild(process.execPath, [cli, 'probe'], { PORT: '0', HOST: '127.0.0.1' }, listening);
const service = await startChild(
  process.execPath,
  [cli, 'serve'],
  { PORT: '0', HOST: '127.0.0.1', NETDIAG_DNS_UPSTREAM: `udp://127.0.0.1:${upstream.port}`, NETDIAG_TRUST_PROXY: 'loopback', NETDIAG_PROBES: `weur=http://127.0.0.1:${probe.port}`, NETDIAG_EVENTS_SINK: 'none' },
  listening,
);
const pid = service.child.pid;

async function phase(name) {
  const latencies = [];
  const statuses = {};
  const cpuBefore = cpuSeconds(pid);
  const end = Date.now() + seconds * 1000;
  await runMix({
    origin: `http://127.0.0.1:${service.port}`,
    concurrency,
    until: () => Date.now() < end,
    record: (ms, status) => {
      latencies.push(ms);
      statuses[status] = (statuses[status] ?? 0) + 1;
    },
  });
  const cpu = cpuSeconds(pid) - cpuBefore;
  return {
    phase: name,
    requests: latencies.length,
    rps: Math.round(latencies.length / seconds),
    'p50 ms': Number(percentile(latencies, 0.5).toFixed(2)),
    'p99 ms': Number(percentile(latencies, 0.99).toFixed(2)),
    'cpu µs/req': Number(((cpu * 1e6) / latencies.length).toFixed(1)),
    'RSS MiB': Number(rssMiB(pid).toFixed(1)),
    'transport errors': statuses[0] ?? 0,
  };
}

/** Holds `count` slow connections open, reopening each one the server closes. */
function holdSlow(count) {
  const held = new Set();
  const lifetimes = [];
  let stopping = false;
  let opened = 0;
  const open = (kind) => {
    if (stopping) return;
    const socket = connect(service.port, '127.0.0.1');
    const since = Date.now();
    let timer;
    opened += 1;
    held.add(socket);
    socket.on('error', () => undefined);
    socket.on('data', () => undefined);
    socket.once('connect', () => {
      if (kind !== 'drip') return;
      socket.write('GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n');
      timer = setInterval(() => socket.write('X-Slow: a\r\n'), 1_000);
    });
    socket.once('close', () => {
      clearInterval(timer);
      held.delete(socket);
      if (!stopping) {
        lifetimes.push(Date.now() - since);
        setImmediate(() => open(kind));
      }
    });
  };
  for (let i = 0; i < count; i++) open(i % 2 === 0 ? 'drip' : 'idle');
  return {
    open: () => held.size,
    opened: () => opened,
    lifetimes,
    stop: () => {
      stopping = true;
      for (const socket of held) socket.destroy();
    },
  };
}

// A first phase warms the service's code up; it is not reported.
await phase('warm-up');
const rows = [];
rows.push(await phase('normal traffic alone'));
const slow = holdSlow(slowCount);
await new Promise((r) => setTimeout(r, 2_000));
const heldAtStart = slow.open();
rows.push({ ...(await phase(`with ${slowCount} slow connections`)), 'slow held': heldAtStart });
const heldAtEnd = slow.open();
slow.stop();
rows.push(await phase('normal traffic alone, after'));
await service.stop();
await Promise.all([probe.stop(), upstream.stop()]);

console.log(`\n${concurrency} concurrent normal requests for ${seconds} s per phase; ${slowCount} slow connections (half dripping a header line a second, half silent) in the middle phase:\n`);
console.table(rows);
const lifetimes = slow.lifetimes.sort((a, b) => a - b);
console.log(`slow connections held open at the start / end of their phase: ${heldAtStart} / ${heldAtEnd}; opened in all: ${slow.opened()}`);
console.log(`how long the server kept a slow connection before closing it: median ${percentile(lifetimes, 0.5)} ms, max ${percentile(lifetimes, 1)} ms (${lifetimes.length} closed)`);
