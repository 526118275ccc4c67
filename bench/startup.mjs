// Start-up of `netdiag serve` with the embedded data (issue 4 asks for both figures): time from
// spawn to the `listening` line, and resident memory 1.5 s later, once start-up garbage is
// collected or not. Five starts, each a fresh process; all values printed, medians beside.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { median, rssMiB } from './lib.mjs';

export async function runStartup({ cli, starts = 5 }) {
  const runs = [];
  for (let i = 0; i < starts; i++) {
    const started = performance.now();
    const child = spawn(process.execPath, [cli, 'serve'], { env: { ...process.env, PORT: '0', HOST: '127.0.0.1' }, stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = once(child, 'exit');
    await new Promise((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`netdiag serve exited with ${code} before listening`)));
      createInterface({ input: child.stdout }).on('line', (line) => {
        if (line.includes('"listening"')) resolve();
      });
    });
    const ms = performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 1500));
    runs.push({ ms, rss: rssMiB(child.pid) });
    child.kill('SIGTERM');
    await exited;
  }
  console.log(`\nStart-up with the embedded data, ${starts} fresh processes:`);
  console.table({
    'ms to listening': { ...Object.fromEntries(runs.map((r, i) => [`#${i + 1}`, Math.round(r.ms)])), median: Math.round(median(runs.map((r) => r.ms))) },
    'MiB resident 1.5 s later': { ...Object.fromEntries(runs.map((r, i) => [`#${i + 1}`, Math.round(r.rss)])), median: Math.round(median(runs.map((r) => r.rss))) },
  });
}
