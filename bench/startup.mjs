// Start-up of `netdiag serve` with the embedded data: time from
// spawn to the `listening` line, and resident memory 1.5 s later, once start-up garbage is
// collected or not. Five starts, each a fresh process; all values printed, medians beside.
import { median, rssMiB, startChild } from './lib.mjs';

export async function runStartup({ cli, starts = 5 }) {
  const runs = [];
  for (let i = 0; i < starts; i++) {
    const started = performance.now();
    const service = await startChild(process.execPath, [cli, 'serve'], { PORT: '0', HOST: '127.0.0.1' }, (line) => (line.includes('"listening"') ? true : undefined));
    const ms = performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 1500));
    runs.push({ ms, rss: rssMiB(service.child.pid) });
    await service.stop();
  }
  console.log(`\nStart-up with the embedded data, ${starts} fresh processes:`);
  console.table({
    'ms to listening': { ...Object.fromEntries(runs.map((r, i) => [`#${i + 1}`, Math.round(r.ms)])), median: Math.round(median(runs.map((r) => r.ms))) },
    'MiB resident 1.5 s later': { ...Object.fromEntries(runs.map((r, i) => [`#${i + 1}`, Math.round(r.rss)])), median: Math.round(median(runs.map((r) => r.rss))) },
  });
}
