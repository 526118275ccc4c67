// npm run bench:shaped [-- --runs 3] [--burst-kb 256] [--only-accuracy | --only-bufferbloat | --only-boosted | --only-completion] [--small-queue-ms 5] [--small-rate-mbit 20] [--completion-runs 8]
//   (root, iproute2, curl, Debian's chromium; Node 22, which reads the .ts link helper)
//
// The speed test's accuracy on links of known speed: the link of test/support/shaped-link.ts
// (tbf on a router namespace, the server in its own namespace sending with CUBIC), at 5, 20 and
// 200 Mbit/s with a 20 ms queue, each run measuring the reference (curl's bulk download and
// upload of the same size), the default test in `netdiag speedtest --json` and in the page in
// Chromium, in turn, with how long each took; then the
// loaded latency with a 5 ms queue at 20 Mbit/s and a 300 ms one at 5 Mbit/s; then boosted links (tbf
// with a peak rate: 20 Mbit/s after a 4 MB bucket at 40, 100 after 20 MB at 200), each run measuring
// a bulk download timed every 100 ms (the sustained rate, the peak, the bytes above the sustained
// rate: test/support/burst-reference.ts) and the default test in the CLI and the page; then the
// page's default test run again and again, back to back, on 5 and 20 Mbit/s links with 20 ms and
// 300 ms queues (--completion-runs each), counting the runs that end with figures. Prints each
// run and the error against the reference. Needs `npm run build`.
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { chromium } from 'playwright-core';
import { setTimeout as sleep } from 'node:timers/promises';
import { measureBurstReference, referenceBytes } from '../test/support/burst-reference.ts';
import { createShapedLink } from '../test/support/shaped-link.ts';

// --burst-kb: tbf's bucket instead of 1 ms at the rate, to see what a larger one does to short transfers.
const { values } = parseArgs({ options: { runs: { type: 'string', default: '3' }, 'burst-kb': { type: 'string' }, 'only-accuracy': { type: 'boolean', default: false }, 'only-bufferbloat': { type: 'boolean', default: false }, 'only-boosted': { type: 'boolean', default: false }, 'only-completion': { type: 'boolean', default: false }, 'completion-runs': { type: 'string', default: '8' }, 'small-queue-ms': { type: 'string', default: '5' }, 'small-rate-mbit': { type: 'string', default: '20' } } });
const burst = values['burst-kb'] === undefined ? undefined : Number(values['burst-kb']) * 1000;
const exec = promisify(execFile);
const CLI = fileURLToPath(new URL('../dist/cli/main.js', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'netdiag-shaped-bench-'));
const link = createShapedLink();
const [command, ...args] = link.inServer([process.execPath, CLI, 'serve']);
const server = spawn(command, args, {
  env: { PATH: process.env.PATH, PORT: '8080', HOST: link.serverAddress, NETDIAG_DNS_UPSTREAM: 'udp://127.0.0.1:9', NETDIAG_EVENTS_SINK: 'none', NETDIAG_RATE_LIMITS: 'speedtest=100000' },
  stdio: ['ignore', 'pipe', 'inherit'],
});
await new Promise((resolve) => {
  let out = '';
  server.stdout.on('data', (d) => {
    out += d;
    if (out.includes('"msg":"listening"')) resolve();
  });
});
const base = `http://${link.serverAddress}:8080`;
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });

/** The better of two bulk transfers each way: one run alone sometimes falls under the link. */
async function reference(bytes) {
  const [a, b] = [await bulk(bytes), await bulk(bytes)];
  return { down: Math.max(a.down, b.down), up: Math.max(a.up, b.up) };
}

async function bulk(bytes) {
  const { stdout: down } = await exec('curl', ['-s', '-o', '/dev/null', '-w', '%{speed_download}', `${base}/__down?bytes=${bytes}`]);
  const body = join(scratch, `up-${bytes}`);
  writeFileSync(body, Buffer.alloc(bytes, 0x30));
  const { stdout: up } = await exec('curl', ['-s', '-o', '/dev/null', '-w', '%{speed_upload}', '-H', 'Content-Type: application/octet-stream', '--data-binary', `@${body}`, `${base}/__up`]);
  return { down: (Number(down) * 8) / 1e6, up: (Number(up) * 8) / 1e6 };
}

async function cli(mode) {
  const { stdout } = await exec(process.execPath, [CLI, 'speedtest', '--mode', mode, '--json', '--no-analytics', '--no-packet-loss', '--url', base, '--timeout', '30'], { maxBuffer: 1 << 20 });
  const r = JSON.parse(stdout);
  return { down: r.download_mbps, up: r.upload_mbps, increase: r.loaded_latency_increase_ms, grade: r.bufferbloat_grade, downBurst: r.download_burst, upBurst: r.upload_burst, ms: r.duration_ms };
}

async function page(mode) {
  const context = await browser.newContext();
  const tab = await context.newPage();
  try {
    await tab.goto(`${base}/`);
    await tab.waitForSelector('#speed-start:not([disabled])');
    await tab.selectOption('#speed-mode', mode);
    const clicked = Date.now();
    await tab.click('#speed-start');
    await tab.locator('#speed-status', { hasText: /^(Done\.|The test did not finish\.)$/ }).waitFor({ timeout: 300_000 });
    const ms = Date.now() - clicked;
    const status = await tab.textContent('#speed-status');
    const error = await tab.textContent('#speed-error');
    const value = async (name) => Number(await tab.getAttribute(`#speed-results [data-metric="${name}"]`, 'data-value'));
    const burst = async (name) => {
      const peak = await tab.getAttribute(`#speed-results [data-metric="${name}"]`, 'data-burst-peak');
      return peak === null ? null : { peak_mbps: Number(peak) / 1e6, bytes: Number(await tab.getAttribute(`#speed-results [data-metric="${name}"]`, 'data-burst-bytes')) };
    };
    return { down: (await value('download')) / 1e6, up: (await value('upload')) / 1e6, bufferbloat: await tab.textContent('#speed-results [data-metric="bufferbloat"] .value'), downBurst: await burst('download'), upBurst: await burst('upload'), ms, done: status === 'Done.', error };
  } finally {
    await context.close();
  }
}

const pct = (value, ref) => `${value >= ref ? '+' : ''}${((100 * (value - ref)) / ref).toFixed(1)}%`;
const rows = [];
try {
  for (const [rate, mode, bytes] of values['only-bufferbloat'] || values['only-boosted'] || values['only-completion'] ? [] : [[5, 'full', 5_000_000], [20, 'full', 12_500_000], [200, 'full', 100_000_000]]) {
    link.shape(rate, 20, burst);
    for (let run = 1; run <= Number(values.runs); run++) {
      const ref = await reference(bytes);
      const c = await cli(mode);
      const p = await page(mode);
      rows.push({
        link: `${rate} Mbit/s, ${mode} test`, run, 'curl down/up': `${ref.down.toFixed(1)} / ${ref.up.toFixed(1)}`,
        CLI: `${c.down} / ${c.up}`, 'CLI error': `${pct(c.down, ref.down)} / ${pct(c.up, ref.up)}`, 'CLI s': (c.ms / 1000).toFixed(1),
        page: `${p.down.toFixed(1)} / ${p.up.toFixed(1)}`, 'page error': `${pct(p.down, ref.down)} / ${pct(p.up, ref.up)}`, 'page s': (p.ms / 1000).toFixed(1),
      });
      console.log(JSON.stringify(rows.at(-1)));
    }
  }
  if (rows.length > 0) console.table(rows);
  if (!values['only-accuracy'] && !values['only-boosted'] && !values['only-completion']) {
    const bloat = [];
    // 5 Mbit/s for the 300 ms queue: the light test's 1 MB transfers last long enough (1.6 s) to fill
    // it. 20 Mbit/s for the small queue: at 5 Mbit/s a 5 ms queue is four frames, and its drops hit
    // the loaded round trips, which then measure retransmissions instead (docs/benchmarks.md).
    for (const [rate, queue] of [[Number(values['small-rate-mbit']), Number(values['small-queue-ms'])], [5, 300]]) {
      link.shape(rate, queue);
      for (let run = 1; run <= Number(values.runs); run++) {
        const c = await cli('light');
        const p = await page('light');
        bloat.push({ link: `${rate} Mbit/s`, queue: `${queue} ms`, run, 'CLI added under load': `${c.increase} ms (${c.grade})`, page: p.bufferbloat });
      }
    }
    console.log('Latency added under load, by the size of the queue (tbf latency):');
    console.table(bloat);
  }
  if (!values['only-accuracy'] && !values['only-bufferbloat'] && !values['only-completion']) {
    const boosted = [];
    const burstText = (b) => (b === null ? 'none' : `${b.peak_mbps.toFixed(1)} Mbit/s, ${(b.bytes / 1e6).toFixed(2)} MB`);
    for (const [rate, peak, bucket] of [[20, 40, 4_000_000], [100, 200, 20_000_000]]) {
      link.shape(rate, 20, bucket, peak);
      const refill = () => sleep((bucket / ((rate * 1e6) / 8)) * 1000 + 1000);
      for (let run = 1; run <= Number(values.runs); run++) {
        await refill();
        const ref = await measureBurstReference(base, referenceBytes(rate, peak, bucket));
        await refill();
        const c = await cli('full');
        await refill();
        const p = await page('full');
        boosted.push({
          link: `${rate}/${peak} Mbit/s, ${bucket / 1e6} MB`, run,
          reference: `${ref.sustainedMbps.toFixed(1)} sustained, burst ${ref.peakMbps.toFixed(1)} Mbit/s, ${(ref.burstBytes / 1e6).toFixed(2)} MB`,
          'CLI down/up': `${c.down} / ${c.up} (${pct(c.down, ref.sustainedMbps)} / ${pct(c.up, ref.sustainedMbps)}), ${(c.ms / 1000).toFixed(1)} s`,
          'CLI bursts': `${burstText(c.downBurst)} / ${burstText(c.upBurst)}`,
          'page down/up': `${p.down.toFixed(1)} / ${p.up.toFixed(1)} (${pct(p.down, ref.sustainedMbps)} / ${pct(p.up, ref.sustainedMbps)})`,
          'page bursts': `${burstText(p.downBurst)} / ${burstText(p.upBurst)}`,
        });
        console.log(JSON.stringify(boosted.at(-1)));
      }
    }
    console.log('Boosted links: the default test against a bulk download timed every 100 ms:');
    console.table(boosted);
  }
  if (!values['only-accuracy'] && !values['only-bufferbloat'] && !values['only-boosted']) {
    // The page's default test back to back on slow shaped links: every run must end with figures.
    const runs = [];
    for (const [rate, queue] of [[5, 20], [5, 300], [20, 20], [20, 300]]) {
      link.shape(rate, queue);
      for (let run = 1; run <= Number(values['completion-runs']); run++) {
        const p = await page('full');
        runs.push({ link: `${rate} Mbit/s, ${queue} ms queue`, run, ended: p.done ? 'with figures' : `did not finish: ${p.error}`, 'down/up': `${p.down.toFixed(2)} / ${p.up.toFixed(2)}`, s: (p.ms / 1000).toFixed(1), bufferbloat: p.bufferbloat });
        console.log(JSON.stringify(runs.at(-1)));
      }
    }
    console.log(`The page's default test back to back: ${runs.filter((r) => r.ended === 'with figures').length} of ${runs.length} runs ended with figures.`);
    console.table(runs);
  }
} finally {
  await browser.close();
  server.kill('SIGTERM');
  await once(server, 'exit');
  link.destroy();
  rmSync(scratch, { recursive: true, force: true });
}
