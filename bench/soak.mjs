// npm run bench:soak [-- --minutes 10 --concurrency 32]
//
// A long run of mixed traffic (bench/traffic.mjs: every route, distinct callers, bad input)
// against one `netdiag serve` with a local DNS upstream, a real probe for one region, and an
// analytics collector that hangs on every other POST. Prints, per minute, the requests, their
// p50/p99 and statuses; the service's RSS and V8 heap at the start and the end; and every
// warning or error it logged, counted by message.
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { listeningPort, rssMiB, startChild } from './lib.mjs';
import { mixedLoadEnv, percentile, runMix } from './traffic.mjs';

const { values: opts } = parseArgs({ options: { minutes: { type: 'string', default: '10' }, concurrency: { type: 'string', default: '32' } } });
const minutes = Number(opts.minutes);
const concurrency = Number(opts.concurrency);

const cli = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
const script = (name) => fileURLToPath(new URL(`./${name}`, import.meta.url));
const portLine = (line) => Number(line);
const listening = listeningPort;

const upstream = await startChild(process.execPath, [script('dns-upstream.mjs')], {}, portLine);
const collector = await startChild(process.execPath, [script('collector.mjs'), 'flaky'], {}, portLine);
const probe = await startChild(process.execPath, [cli, 'probe'], { PORT: '0', HOST: '127.0.0.1' }, listening);
const service = await startChild(
  process.execPath,
  ['--expose-gc', '-r', script('force-gc.cjs'), '-r', script('memory-report.cjs'), cli, 'serve'],
  mixedLoadEnv({ upstream, probe, collector }),
  listening,
);
const pid = service.child.pid;
const parsed = () => service.output.map((l) => { try { return JSON.parse(l); } catch { return undefined; } }).filter((e) => e !== undefined);
const MiB = (bytes) => Number((bytes / 1024 / 1024).toFixed(1));
/** Full collections in the service (force-gc.cjs), then its live heap and RSS. */
const afterGc = async (when) => {
  const before = parsed().filter((e) => e.bench_memory_after_gc !== undefined).length;
  service.child.kill('SIGUSR2');
  for (let i = 0; i < 100 && parsed().filter((e) => e.bench_memory_after_gc !== undefined).length === before; i++) await new Promise((r) => setTimeout(r, 50));
  const m = parsed().filter((e) => e.bench_memory_after_gc !== undefined).at(-1)?.bench_memory_after_gc;
  return { when, 'RSS MiB': Number(rssMiB(pid).toFixed(1)), 'live heap MiB': MiB(m?.heapUsed ?? NaN), 'heap total MiB': MiB(m?.heapTotal ?? NaN), 'external MiB': MiB(m?.external ?? NaN) };
};

const origin = `http://127.0.0.1:${service.port}`;
const started = Date.now();
const end = started + minutes * 60_000;
const perMinute = Array.from({ length: minutes }, () => ({ latencies: [], statuses: {} }));
// The live heap after 10 s, half way and at the end (each a moment of full collections in the
// service: one slow request per minute or so in the figures below, no more).
const snapshots = [];
const checkpoints = [10_000, (minutes * 60_000) / 2].map((ms) => setTimeout(() => { void afterGc(`${Math.round(ms / 1000)} s`).then((row) => snapshots.push(row)); }, ms));

await runMix({
  origin,
  concurrency,
  until: () => Date.now() < end,
  record: (ms, status) => {
    const minute = perMinute[Math.min(minutes - 1, Math.floor((Date.now() - started) / 60_000))];
    minute.latencies.push(ms);
    minute.statuses[status] = (minute.statuses[status] ?? 0) + 1;
  },
});
checkpoints.forEach(clearTimeout);
snapshots.push(await afterGc('end'));
const reports = parsed().filter((e) => e.bench_memory !== undefined);

await service.stop();
await Promise.all([probe.stop(), collector.stop(), upstream.stop()]);

console.log(`\nSoak: ${minutes} min of mixed traffic, ${concurrency} concurrent requests, distinct callers, collector hanging on every other POST\n`);
console.table(
  perMinute.map((m, i) => ({
    minute: i + 1,
    requests: m.latencies.length,
    'rps': Math.round(m.latencies.length / 60),
    'p50 ms': Number(percentile(m.latencies, 0.5).toFixed(2)),
    'p99 ms': Number(percentile(m.latencies, 0.99).toFixed(2)),
    'max ms': Number(percentile(m.latencies, 1).toFixed(1)),
    statuses: Object.entries(m.statuses).map(([s, n]) => `${s}:${n}`).join(' '),
  })),
);
console.log('Memory of the service after full collections (RSS from /proc; the live V8 heap from inside):');
console.table(snapshots);
console.log(`heap used every 10 s, garbage included (MiB): ${reports.map((r) => MiB(r.bench_memory.heapUsed)).join(' ')}`);

const logged = {};
for (const line of service.output) {
  let entry;
  try {
    entry = JSON.parse(line);
  } catch {
    logged[`(not JSON) ${line.slice(0, 80)}`] = (logged[`(not JSON) ${line.slice(0, 80)}`] ?? 0) + 1;
    continue;
  }
  if (['warn', 'error', 'fatal'].includes(entry.level)) logged[`${entry.level}: ${entry.msg}`] = (logged[`${entry.level}: ${entry.msg}`] ?? 0) + 1;
}
console.log('Warnings and errors the service logged, by message:');
console.table(Object.entries(logged).map(([message, count]) => ({ message, count })));
console.log(collector.output.join('\n'));
