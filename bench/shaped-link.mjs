// npm run bench:shaped [-- --runs 3] [--only plain-20-q5,boosted-20-40,...] [--page-runs 30] [--page-runs-cell plain-20-q300] [--truth-only]
//   (root, iproute2, iputils ping, Debian's chromium; Node 22; needs `npm run build`, which the npm script runs)
//
// Issue 48's acceptance matrix as a benchmark: the cells of test/support/link-matrix.ts (plain 5,
// 20, 100, 200 Mbit/s with 5 and 300 ms queues, 50/5 asymmetric, boosted 20/40 after 4 MB and
// 100/200 after 20 MB, the unshaped veth path) on the link of test/support/shaped-link.ts, each run
// measuring the truth (test/support/link-truth.ts: bulk transfers timed every 100 ms, ping idle and
// under each direction's load), `netdiag speedtest`'s default test and the page's in Chromium, in
// turn, and listing what test/timed/link-matrix.test.ts would call a miss ("errors"). Then the
// page's default test run back to back --page-runs times on one cell (plain-20-q300 unless
// --page-runs-cell), counting the runs that end with figures. A table per cell and a summary.
//
// The shared TypeScript (the matrix, the truth, src/common/speedtest's rules) is bundled with
// esbuild on start, so the bench and the suite run the same code.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { importTestSupport } from './test-support.mjs';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    only: { type: 'string' },
    'page-runs': { type: 'string', default: '30' },
    'page-runs-cell': { type: 'string', default: 'plain-20-q300' },
    'truth-only': { type: 'boolean', default: false },
  },
});
const runs = Number(values.runs);
const root = fileURLToPath(new URL('..', import.meta.url));
const CLI = join(root, 'dist/cli/main.js');
const scratch = mkdtempSync(join(tmpdir(), 'netdiag-shaped-bench-'));

// The suite's own code: the matrix, the truth and the link, one bundle (Node's type stripping
// cannot follow the .js specifiers TypeScript's imports use).
const m = await importTestSupport(
  "export * from './test/support/link-matrix.ts'; export * from './test/support/link-truth.ts'; export { createShapedLink, serveOnLink } from './test/support/shaped-link.ts';",
  scratch,
);

const only = values.only === undefined ? undefined : new Set(values.only.split(',').map((s) => s.trim()));
const unknown = only === undefined ? [] : [...only].filter((name) => !m.CELLS.some((c) => c.name === name));
if (unknown.length > 0) {
  console.error(`unknown cells: ${unknown.join(', ')}; the cells are ${m.CELLS.map((c) => c.name).join(', ')}`);
  process.exit(2);
}
const cells = m.CELLS.filter((c) => only === undefined || only.has(c.name));

const link = m.createShapedLink();
let served;
let sink;
let browser;
const summary = [];
try {
  served = await m.serveOnLink(link, CLI, { NETDIAG_RATE_LIMITS: 'speedtest=100000,turn=100' });
  sink = await m.startUploadSink(link);
  browser = values['truth-only'] ? undefined : await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
  const refill = (cell) => sleep(Math.max(m.refillSeconds(cell.shape?.down), m.refillSeconds(cell.shape?.up)) * 1000);
  const f1 = (v) => (v === null || v === undefined ? '-' : Number(v).toFixed(1));
  for (const cell of cells) {
    m.applyCell(link, cell);
    const rows = [];
    let missed = 0;
    const cliRuns = [];
    const pageRuns = [];
    const carried = { cli: [], page: [] };
    for (let run = 1; run <= runs; run++) {
      const truth = await m.measureLinkTruth(link, served.base, sink, cell.shape);
      if (values['truth-only']) {
        console.log(`${cell.name} run ${run}: ${m.truthText(truth)}`);
        rows.push({ run, 'truth down/up': `${f1(truth.download.sustainedMbps)} / ${f1(truth.upload.sustainedMbps)}`, 'peaks': `${f1(truth.download.peakMbps)} / ${f1(truth.upload.peakMbps)}`, 'ping idle / down / up': `${f1(truth.idleMs)} / ${f1(truth.download.loadedMs)} / ${f1(truth.upload.loadedMs)}`, grade: m.truthGrade(truth) });
        continue;
      }
      await refill(cell);
      const cliCount = link.countCarried();
      const cli = await m.runCliTest(CLI, served.base);
      const cliCarried = await cliCount.stop();
      await refill(cell);
      const pageCount = link.countCarried();
      const page = await m.runPageTest(browser, served.base, scratch);
      const pageCarried = await pageCount.stop();
      cliRuns.push(cli);
      pageRuns.push(page);
      carried.cli.push(cliCarried);
      carried.page.push(pageCarried);
      const { misses, figures } = m.judgeCell(cell, truth, cli, page, m.ISSUE_BOUNDS, { cli: cliCarried, page: pageCarried });
      process.stdout.write(m.cellLine(cell, truth, figures));
      if (misses.length > 0) missed++;
      const c = figures.cli;
      const p = figures.page;
      rows.push({
        run,
        'truth down/up': `${f1(truth.download.sustainedMbps)} / ${f1(truth.upload.sustainedMbps)}`,
        'ping idle/down/up': `${f1(truth.idleMs)} / ${f1(truth.download.loadedMs)} / ${f1(truth.upload.loadedMs)} (${m.truthGrade(truth)})`,
        CLI: c.error === undefined ? `${f1(c.down)} / ${f1(c.up)}, ${f1(c.loadedDown)} / ${f1(c.loadedUp)} ms (${c.grade}), ${f1((c.durationMs ?? 0) / 1000)} s` : 'failed',
        page: p.error === undefined ? `${f1(p.down)} / ${f1(p.up)}, ${f1(p.loadedDown)} / ${f1(p.loadedUp)} ms (${p.grade}), ${f1(p.ms / 1000)} s` : 'failed',
        errors: misses.length === 0 ? 'none' : String(misses.length),
      });
      for (const miss of misses) console.log(`  error: ${miss}`);
    }
    console.log(`${cell.name}: ${m.describeCell(cell)}`);
    console.table(rows);
    if (!values['truth-only']) {
      let repeatNote = '';
      if (cell.kind === 'unshaped' && runs > 1) {
        const repeats = m.judgeRepeats(cliRuns, pageRuns, m.ISSUE_BOUNDS, carried);
        console.log(`unshaped, ${runs} runs each: ${repeats.summary}`);
        for (const miss of repeats.misses) console.log(`  error: ${miss}`);
        repeatNote = `, repeat checks ${repeats.misses.length === 0 ? 'passed' : `${repeats.misses.length} errors`}`;
      }
      summary.push({ cell: cell.name, link: m.describeCell(cell), runs, 'runs with errors': missed, note: repeatNote });
    }
  }
  if (!values['truth-only'] && Number(values['page-runs']) > 0) {
    const target = m.CELLS.find((c) => c.name === values['page-runs-cell']);
    if (target === undefined) throw new Error(`no cell ${values['page-runs-cell']}`);
    m.applyCell(link, target);
    let ended = 0;
    const total = Number(values['page-runs']);
    const durations = [];
    for (let run = 1; run <= total; run++) {
      const page = await m.runPageTest(browser, served.base, scratch);
      if (page.ok) {
        ended++;
        durations.push(page.result.ms);
      } else console.log(`page run ${run} on ${target.name} did not end with figures: ${page.error}`);
    }
    console.log(`The page's default test back to back on ${target.name}: ${ended} of ${total} runs ended with figures; click to "Done." ${durations.length === 0 ? '-' : `${(Math.min(...durations) / 1000).toFixed(1)}-${(Math.max(...durations) / 1000).toFixed(1)} s`}.`);
    summary.push({ cell: `${target.name} (page back to back)`, link: m.describeCell(target), runs: total, 'runs with errors': total - ended, note: 'ended with figures' });
  }
  if (summary.length > 0) {
    console.log('Summary (an error is what test/timed/link-matrix.test.ts would fail on):');
    console.table(summary);
  }
} finally {
  await browser?.close();
  await sink?.stop();
  await served?.stop();
  link.destroy();
  rmSync(scratch, { recursive: true, force: true });
}
