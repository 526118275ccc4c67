// Throughput and CPU per gigabyte of the speed-test targets: netdiag's /__down and
// /__up against a bare node:http server moving the same bytes (bench/targets-baseline.mjs), in
// interleaved rounds. Each round keeps `connections` clients busy for `duration` seconds with the
// full plan's largest transfers (100 MB down, 50 MB up), each client a new public caller as the
// engine's requests from many users would be; the figure beside the rate is the server's CPU
// (utime + stime) per gigabyte moved.
// Part of `npm run bench` (`--only targets` alone); with its own options: node bench/targets.mjs
// [--rounds 3 --duration 5 --connections 4].
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import { cpuSeconds, listeningPort, median, publicCaller, startChild } from './lib.mjs';

const DOWN = 100_000_000;
const UP = 50_000_000;
const UPLOAD = Buffer.alloc(UP, '0');

const cli = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
const baselineScript = fileURLToPath(new URL('./targets-baseline.mjs', import.meta.url));
export async function runTargets({ rounds = 3, durationS = 5, connections = 4 } = {}) {
const duration = durationS * 1000;
const service = await startChild(process.execPath, [cli, 'serve'], { PORT: '0', HOST: '127.0.0.1', NETDIAG_TRUST_PROXY: 'loopback', NETDIAG_RATE_LIMITS: 'speedtest=100000000', NETDIAG_EVENTS_SINK: 'none' }, listeningPort);
const baseline = await startChild(process.execPath, [baselineScript], {}, (line) => (/^[0-9]+$/.test(line) ? Number(line) : undefined));
const dispatcher = new Agent({ connections: connections * 2, bodyTimeout: 0, headersTimeout: 0 });

/** Keeps `connections` clients moving bytes in `direction` for the round; returns GB/s and CPU s/GB. */
const round = async (port, pid, direction) => {
  const before = cpuSeconds(pid);
  const started = performance.now();
  let moved = 0;
  const client = async () => {
    while (performance.now() - started < duration) {
      const headers = { 'x-forwarded-for': publicCaller() };
      if (direction === 'down') {
        const res = await request(`http://127.0.0.1:${port}/__down?bytes=${DOWN}`, { dispatcher, headers });
        if (res.statusCode !== 200) throw new Error(`/__down answered ${res.statusCode}`);
        for await (const chunk of res.body) moved += chunk.byteLength;
      } else {
        const res = await request(`http://127.0.0.1:${port}/__up?bytes=${UP}`, { dispatcher, method: 'POST', headers: { ...headers, 'content-type': 'text/plain' }, body: UPLOAD });
        await res.body.dump();
        if (res.statusCode !== 200) throw new Error(`/__up answered ${res.statusCode}`);
        moved += UP;
      }
    }
  };
  await Promise.all(Array.from({ length: connections }, client));
  const seconds = (performance.now() - started) / 1000;
  const gb = moved / 1e9;
  return { gbps: gb / seconds, cpuPerGb: (cpuSeconds(pid) - before) / gb };
}

const rows = [];
for (const direction of ['down', 'up']) {
  const s = { gbps: [], cpu: [] };
  const b = { gbps: [], cpu: [] };
  for (let i = 0; i < rounds; i++) {
    const x = await round(baseline.port, baseline.child.pid, direction);
    b.gbps.push(x.gbps);
    b.cpu.push(x.cpuPerGb);
    const y = await round(service.port, service.child.pid, direction);
    s.gbps.push(y.gbps);
    s.cpu.push(y.cpuPerGb);
  }
  rows.push({
    target: direction === 'down' ? `GET /__down?bytes=${DOWN}` : `POST /__up (${UP} bytes)`,
    'netdiag GB/s': Number(median(s.gbps).toFixed(2)),
    'bare GB/s': Number(median(b.gbps).toFixed(2)),
    ratio: Number((median(s.gbps) / median(b.gbps)).toFixed(2)),
    'netdiag CPU s/GB': Number(median(s.cpu).toFixed(3)),
    'bare CPU s/GB': Number(median(b.cpu).toFixed(3)),
  });
}
console.log(`${rounds} interleaved rounds of ${duration / 1000} s, ${connections} clients, medians; a new caller per request`);
console.table(rows);
await dispatcher.close();
for (const child of [service, baseline]) await child.stop();
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { rounds: { type: 'string', default: '3' }, duration: { type: 'string', default: '5' }, connections: { type: 'string', default: '4' } } });
  await runTargets({ rounds: Number(values.rounds), durationS: Number(values.duration), connections: Number(values.connections) });
  process.exit(0);
}
