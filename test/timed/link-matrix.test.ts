// Issue 48's acceptance matrix: the speed test's default test on links of known shape, held to
// the truth of the same link in the same run (test/support/link-truth.ts: bulk transfers timed
// every 100 ms, `ping` idle and beside each bulk transfer), never to figures from the code under
// test. The cells (test/support/link-matrix.ts CELLS): plain 5, 20, 100 and 200 Mbit/s each with a
// 5 ms and a 300 ms queue; 50 down (20 ms queue) / 5 up (200 ms queue); 20 after a 4 MB bucket at
// 40 and 100 after 20 MB at 200 (tbf peakrate, both ways); the unshaped veth path. Each cell: the
// truth, then `netdiag speedtest --mode full --json`, then the page's default test in Chromium,
// in turn, one round, no second try. Per cell (judgeCell, SUITE_BOUNDS): sustained rates within
// 25% of the truth (issue 48 asks 5% and 10% on the boosted links: loss-based TCP fills these
// links differently from run to run, so that is what `npm run bench:shaped` measures and
// reports over several runs, ISSUE_BOUNDS; on the unshaped path, which has no rate but what this
// machine's two cores give it at the moment, within 15% of what the router counted in that run's
// own measured window, link-carried.ts carriedIn);
// a burst named on the boosted links (its peak within 15% of the fastest second the link carried
// in that client's own run, counted on the router, test/support/link-carried.ts: a tbf peak moves
// 150-190 Mbit/s of its 200 from run to run on this machine; its size within 30% of the truth's)
// and on no other;
// each direction's loaded latency within 20% or 10 ms of ping's median beside that client's own
// load (link-carried.ts: the pings sent in the client's measured window, placed from the start of
// the direction's busy stretch on the router; a deep queue fills to a different depth from one
// load to the next, so the truth's pings are no reference for another load's: the page's four
// uploads keep 160-260 ms of a 300 ms queue where bulk senders keep 260-300) and the grade
// equal to the truth's away from a band's edge (bufferbloat.ts on ping's idle and worse loaded
// medians); each test ending within 25 s; each measured window at least 5 s; the page's live
// rate in each direction's last second within 10% of its final figure; the page's headline equal
// to measureDirection over the progress and round trips it exported. On the unshaped path, ten
// CLI and ten page runs more, each counted on the router: each within 15% of what the router
// counted in its window, no burst in any, each on a whole window; each set's largest over
// smallest printed (the 1.3 is the benchmark's: in one CI round the CLI's downloads read
// 3 184-22 290 Mbit/s, each as the router counted it, the path moving what the cores left it).
// Figures are printed for the closing note; `npm run bench:shaped` runs the same matrix N times.
// CI's set (test/support/timed-set.ts) runs CI_CELLS, the unshaped pair once; the full run every
// cell and the unshaped repeats.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyCell, boundsUsedText, cellLine, CELLS, judgeCell, judgeRepeats, runCliTest, runPageTest, SUITE_BOUNDS, type CliRun, type PageRun } from '../support/link-matrix.js';
import { measureLinkTruth, refillSeconds, startUploadSink, type UploadSink } from '../support/link-truth.js';
import { canMakeNetns } from '../support/netns.js';
import { CLI } from '../support/process.js';
import { createShapedLink, serveOnLink, type ShapedLink } from '../support/shaped-link.js';
import { LOOPBACK_TRANSFERS } from '../support/server.js';
import { requireCommands } from '../support/system.js';
import { timedCases, timedRepeats } from '../support/timed-set.js';
import { setTimeout as sleep } from 'node:timers/promises';

const ready = requireCommands('speed test link matrix', ['ip', 'tc', 'ping', 'chromium'], 'iproute2 iputils-ping chromium') && canMakeNetns();

/**
 * CI's cells, one of each kind that has broken before: a slow plain link with a deep queue (the
 * bufferbloat grade; a counting fault showed at 5 Mbit/s), the asymmetric line, a boosted link
 * (a burst, then the sustained rate) and the unshaped path.
 */
const CI_CELLS = new Set(['plain-5-q300', 'asym-50-5', 'boosted-20-40', 'unshaped']);
const misnamed = [...CI_CELLS].filter((name) => !CELLS.some((cell) => cell.name === name));
if (misnamed.length > 0) throw new Error(`CI_CELLS names no cell of the matrix: ${misnamed.join(', ')}`);

/** The unshaped path's runs per client: ten in the full run, the pair alone in CI's set. */
const REPEATS = timedRepeats(10, 1);

describe.skipIf(!ready)('the speed test across the link matrix (issue 48)', () => {
  let link: ShapedLink;
  let browser: Browser;
  let served: Awaited<ReturnType<typeof serveOnLink>>;
  let sink: UploadSink;
  const scratch = mkdtempSync(join(tmpdir(), 'netdiag-matrix-'));

  beforeAll(async () => {
    link = createShapedLink();
    served = await serveOnLink(link, CLI, { NETDIAG_RATE_LIMITS: 'speedtest=100000,turn=100', ...LOOPBACK_TRANSFERS });
    sink = await startUploadSink(link);
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'], timeout: 20_000 });
  }, 60_000);

  afterAll(async () => {
    await browser.close();
    await sink.stop();
    await served.stop();
    link.destroy();
    rmSync(scratch, { recursive: true, force: true });
  });

  /** Waits for the cell's buckets to refill (and its queues to drain) before a measurement. */
  const refill = (cell: (typeof CELLS)[number]) => sleep(Math.max(refillSeconds(cell.shape?.down), refillSeconds(cell.shape?.up)) * 1000);

  it.each(timedCases(CELLS, (cell) => CI_CELLS.has(cell.name), (cell) => cell.name))('$name: the CLI and the page read the truth', async (cell) => {
    applyCell(link, cell);
    const truth = await measureLinkTruth(link, served.base, sink, cell.shape);
    await refill(cell);
    // What the link carried in each client's own run, and ping beside it: a burst's peak and the
    // loaded latency are held to them.
    const cliCount = link.countCarried();
    const cli: CliRun = await runCliTest(CLI, served.base);
    const cliCarried = await cliCount.stop();
    await refill(cell);
    const pageCount = link.countCarried();
    const page: PageRun = await runPageTest(browser, served.base, scratch);
    const pageCarried = await pageCount.stop();
    const { misses, figures, used, notHeld } = judgeCell(cell, truth, cli, page, SUITE_BOUNDS, { cli: cliCarried, page: pageCarried });
    process.stdout.write(cellLine(cell, truth, figures));
    process.stdout.write(`  ${cell.name} bounds used: ${boundsUsedText(used)}\n`);
    if (notHeld.length > 0) process.stdout.write(`  ${cell.name} figures not held (a lossy queue): ${notHeld.join('; ')}\n`);
    if (cell.kind === 'unshaped' && REPEATS > 1) {
      // The set of ten each: the first run above and nine more, CLI and page in turn.
      // Each counted on the router: its rates are held to what the link carried in its window.
      const clis = [cli];
      const pages = [page];
      const carried = { cli: [cliCarried], page: [pageCarried] };
      for (let i = 1; i < REPEATS; i++) {
        const cliRepeat = link.countCarried();
        clis.push(await runCliTest(CLI, served.base));
        carried.cli.push(await cliRepeat.stop());
        const pageRepeat = link.countCarried();
        pages.push(await runPageTest(browser, served.base, scratch));
        carried.page.push(await pageRepeat.stop());
      }
      const repeats = judgeRepeats(clis, pages, SUITE_BOUNDS, carried);
      process.stdout.write(`unshaped, ${String(REPEATS)} runs each: ${repeats.summary}\n`);
      misses.push(...repeats.misses);
    }
    expect(misses).toEqual([]);
  }, 900_000);
});
