// The speed test on links of known speed (test/support/shaped-link.ts: tbf on a router namespace
// between this namespace and the server's, the server sending with CUBIC). The reference is what
// curl's bulk transfers achieve on the same link in the same run; the default test in
// `netdiag speedtest` and in the page must report download and upload within 5% of it at 5, 20 and
// 200 Mbit/s, in one round (no second try), its loaded latency must follow
// the size of the queue (5 ms at 20 Mbit/s against 300 ms at 5 Mbit/s: at least 100 ms more under load, and the grade
// with it), and with a 20 ms delay line its idle latency must be within 2 ms of curl's time to
// first byte on a warm connection. The page is held to the same accuracy and the same bufferbloat
// difference, and its headline figures to the CLI's rules applied to the transfers it exported. Figures are printed for the closing note; bench/ has the same as a benchmark.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bufferbloat } from '../../src/common/speedtest/bufferbloat.js';
import { directionRates, type TimedTransfer } from '../../src/common/speedtest/burst.js';
import { latencyOf } from '../../src/common/speedtest/metrics.js';
import { sharedBps, sharedMs } from '../../src/common/speedtest/share.js';
import { startDelayRelay, type DelayRelay } from '../support/delay-relay.js';
import { canMakeNetns } from '../support/netns.js';
import { CLI, runCli } from '../support/process.js';
import { createShapedLink, serveOnLink, type ShapedLink } from '../support/shaped-link.js';
import { requireCommands } from '../support/system.js';

const ready = requireCommands('speed test on shaped links', ['ip', 'tc', 'curl', 'chromium'], 'iproute2 curl chromium') && canMakeNetns();
const exec = promisify(execFile);

interface Report {
  download_mbps: number | null;
  upload_mbps: number | null;
  latency_ms: number | null;
  download_loaded_latency_ms: number | null;
  upload_loaded_latency_ms: number | null;
  loaded_latency_increase_ms: number | null;
  bufferbloat_grade: string | null;
}

describe.skipIf(!ready)('speed test accuracy on shaped links', () => {
  let link: ShapedLink;
  let browser: Browser;
  let served: Awaited<ReturnType<typeof serveOnLink>>;
  let base: string;
  const scratch = mkdtempSync(join(tmpdir(), 'netdiag-shaped-'));

  beforeAll(async () => {
    link = createShapedLink();
    served = await serveOnLink(link, CLI, { NETDIAG_RATE_LIMITS: 'speedtest=100000,turn=100' });
    base = served.base;
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'], timeout: 20_000 });
  }, 30_000);

  afterAll(async () => {
    await browser.close();
    await served.stop();
    link.destroy();
    rmSync(scratch, { recursive: true, force: true });
  });

  /**
   * curl's own figures for a bulk download and upload of `bytes`, the better of two runs each: the
   * reference, in Mbit/s. One run alone sometimes fell 10% under the link (a CUBIC sawtooth in the
   * small queue, or this shared machine's scheduling) while the clients did not.
   */
  async function reference(bytes: number): Promise<{ down: number; up: number }> {
    const [a, b] = [await bulk(bytes), await bulk(bytes)];
    return { down: Math.max(a.down, b.down), up: Math.max(a.up, b.up) };
  }

  async function bulk(bytes: number): Promise<{ down: number; up: number }> {
    const { stdout: down } = await exec('curl', ['-s', '-o', '/dev/null', '-w', '%{speed_download}', `${base}/__down?bytes=${String(bytes)}`], { timeout: 120_000 });
    const body = join(scratch, `up-${String(bytes)}`);
    writeFileSync(body, Buffer.alloc(bytes, 0x30));
    const { stdout: up } = await exec('curl', ['-s', '-o', '/dev/null', '-w', '%{speed_upload}', '-H', 'Content-Type: application/octet-stream', '--data-binary', `@${body}`, `${base}/__up`], { timeout: 120_000 });
    return { down: (Number(down) * 8) / 1e6, up: (Number(up) * 8) / 1e6 };
  }

  async function speedtest(mode: 'light' | 'full', url = base): Promise<Report> {
    const run = await runCli(['speedtest', '--mode', mode, '--json', '--no-analytics', '--no-packet-loss', '--url', url, '--timeout', '30'], {}, 240_000);
    expect(run.code, run.stderr).toBe(0);
    return JSON.parse(run.stdout) as Report;
  }

  interface PageResult {
    down: number;
    up: number;
    /** What "Latency under load" shows, and whether the note naming the browser as the limit is shown. */
    loaded: string;
    browserNote: boolean;
    /** The latency added under load in ms (its exact figure), and the grade shown, if measured. */
    bloat: number | null;
    grade: string;
    /** From the click on Start to "Done." (to the half second the status is polled at). */
    ms: number;
    /** The verdict line above the figures, or null when hidden. */
    verdict: string | null;
    /** Each change of the live rate the page showed: when (ms, page clock), which direction, the rate. */
    live: { at: number; direction: string; bps: number }[];
    /** The four headline figures' exact values (data-value), as the page showed them. */
    headline: Record<'download' | 'upload' | 'latency' | 'bufferbloat', number | null>;
    /** What the page's Export JSON wrote for the test. */
    exported: Exported;
  }

  interface ExportedTransfer {
    counted_bytes: number;
    duration_ms: number;
    ttfb_ms: number;
    ended_at_ms: number;
    mbps: number;
  }
  interface Exported {
    transfers: { download: ExportedTransfer[]; upload: ExportedTransfer[] };
    round_trips_ms: { idle: number[]; loaded_down: number[]; loaded_up: number[] };
  }

  /**
   * The headline figures by the command line's own rules (src/common/speedtest/burst.ts, metrics.ts,
   * bufferbloat.ts, the functions `netdiag speedtest` reports with) applied to the transfers and
   * round trips the page exported, at the precision a share link keeps.
   */
  function cliRules(e: Exported): PageResult['headline'] {
    const timed = (list: ExportedTransfer[]): TimedTransfer[] => list.map((t) => ({ bytes: t.counted_bytes, duration: t.duration_ms, ping: t.ttfb_ms, bps: t.mbps * 1e6, endMs: t.ended_at_ms }));
    const rate = (list: ExportedTransfer[]) => {
      const sustained = directionRates(timed(list)).sustained;
      return sustained === undefined ? null : sharedBps(sustained.bps);
    };
    const median = (ms: number[]) => {
      const m = latencyOf(ms);
      return m === undefined ? undefined : sharedMs(m);
    };
    const idle = median(e.round_trips_ms.idle);
    const down = median(e.round_trips_ms.loaded_down);
    const up = median(e.round_trips_ms.loaded_up);
    const loaded = down === undefined && up === undefined ? undefined : Math.max(down ?? -Infinity, up ?? -Infinity);
    return { download: rate(e.transfers.download), upload: rate(e.transfers.upload), latency: idle ?? null, bufferbloat: bufferbloat(idle, loaded)?.increaseMs ?? null };
  }

  /**
   * The page's speed test in Chromium: its figures as it shows them. A run that does not end in
   * "Done." fails the test, with what the browser logged printed.
   */
  async function pageTest(mode: 'light' | 'full'): Promise<PageResult> {
    const run = await pageRun(mode);
    if (run.ok) return run.result;
    process.stdout.write(`page ${mode} test did not finish: ${run.error}\n${run.log.join('\n')}\n`);
    throw new Error(`the page's ${mode} test did not finish: ${run.error}`);
  }

  async function pageRun(mode: 'light' | 'full'): Promise<{ ok: true; result: PageResult } | { ok: false; error: string; log: string[] }> {
    const context = await browser.newContext();
    const page = await context.newPage();
    const log: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') log.push(`console ${message.type()}: ${message.text()}`);
    });
    page.on('requestfailed', (request) => log.push(`request failed: ${request.method()} ${request.url()} ${request.failure()?.errorText ?? ''}`));
    // Every change of the live rate, as it appeared in the DOM.
    await page.addInitScript(() => {
      const seen: { at: number; direction: string; bps: number }[] = [];
      (window as unknown as { live: typeof seen }).live = seen;
      document.addEventListener('DOMContentLoaded', () => {
        const rate = document.querySelector<HTMLElement>('#speed-live-rate');
        if (rate === null) return;
        new MutationObserver(() => {
          if (rate.dataset.bps !== undefined) seen.push({ at: performance.now(), direction: rate.dataset.direction ?? '', bps: Number(rate.dataset.bps) });
        }).observe(rate, { attributes: true, attributeFilter: ['data-bps'] });
      });
    });
    try {
      await page.goto(`${base}/`);
      await page.waitForSelector('#speed-start:not([disabled])');
      await page.selectOption('#speed-mode', mode);
      const clicked = Date.now();
      await page.click('#speed-start');
      await expect.poll(() => page.textContent('#speed-status'), { timeout: 200_000, interval: 500 }).toMatch(/^(Done\.|The test did not finish\.)$/);
      const ms = Date.now() - clicked;
      if ((await page.textContent('#speed-status')) !== 'Done.') return { ok: false, error: (await page.textContent('#speed-error')) ?? '', log };
      const value = async (name: string) => Number(await page.getAttribute(`#speed-results [data-metric="${name}"]`, 'data-value')) / 1e6;
      const exact = async (name: string) => page.getAttribute(`#speed-results [data-metric="${name}"]`, 'data-value').then((v) => (v === null ? null : Number(v)));
      const [file] = await Promise.all([page.waitForEvent('download'), page.click('#speed-export-json')]);
      const exportPath = join(scratch, `export-${String(Date.now())}.json`);
      await file.saveAs(exportPath);
      return {
        ok: true,
        result: {
          down: await value('download'),
          up: await value('upload'),
          loaded: (await page.textContent('#speed-results [data-metric="loaded"] .value')) ?? '',
          browserNote: await page.isVisible('#speed-note'),
          bloat: await page.getAttribute('#speed-results [data-metric="bufferbloat"]', 'data-value').then((v) => (v === null ? null : Number(v))),
          grade: ((await page.textContent('#speed-results [data-metric="bufferbloat"] .value')) ?? '').split(' ')[0] ?? '',
          ms,
          verdict: (await page.isVisible('#speed-verdict')) ? await page.textContent('#speed-verdict') : null,
          live: await page.evaluate(() => (window as unknown as { live: { at: number; direction: string; bps: number }[] }).live),
          headline: { download: await exact('download'), upload: await exact('upload'), latency: await exact('latency'), bufferbloat: await exact('bufferbloat') },
          exported: JSON.parse(readFileSync(exportPath, 'utf8')) as Exported,
        },
      };
    } finally {
      await context.close();
    }
  }

  const within = (value: number | null, target: number, share: number) => value !== null && Math.abs(value - target) <= target * share;

  it.each([
    [5, 5_000_000],
    [20, 12_500_000],
    [200, 100_000_000],
  ])('at %s Mbit/s, the default test in the CLI and in the page reads download and upload within 5% of curl\'s bulk transfers of %s bytes, and the page\'s headline is the CLI\'s rules on the transfers it exported', async (rate, bytes) => {
    // One round, no second try: a miss is the clients' (or the reference's) and fails the test.
    link.shape(rate, 20);
    const ref = await reference(bytes);
    const cliStarted = Date.now();
    const cli = await speedtest('full');
    const cliMs = Date.now() - cliStarted;
    const page = await pageTest('full');
    // Durations are printed for the closing note and docs/benchmarks.md, not held to a bound here
    // (this machine's speed is not under test; bench:shaped measures them).
    process.stdout.write(`shaped ${String(rate)} Mbit/s: curl ${ref.down.toFixed(1)} down / ${ref.up.toFixed(1)} up; netdiag speedtest ${String(cli.download_mbps)} / ${String(cli.upload_mbps)} in ${String(cliMs)} ms; page ${page.down.toFixed(1)} / ${page.up.toFixed(1)} Mbit/s in ${String(page.ms)} ms\n`);
    // Every step that decides the figure lasts long enough for loaded round trips at these rates.
    expect(page.loaded).toMatch(/^[0-9.]+ ms down, [0-9.]+ ms up$/);
    // Live while it measured: at least four new rates a second through each direction, as the
    // DOM showed them (a MutationObserver on the live figure), the last ones near the link's rate.
    for (const direction of ['download', 'upload']) {
      const seen = page.live.filter((l) => l.direction === direction);
      const spanS = ((seen.at(-1)?.at ?? 0) - (seen[0]?.at ?? 0)) / 1000;
      // The live readings of the direction's second half, when its transfers are long: what was moving then.
      const late = seen.slice(Math.floor(seen.length / 2)).map((l) => l.bps / 1e6).sort((a, b) => a - b);
      const lateMedian = late[Math.floor(late.length / 2)] ?? 0;
      process.stdout.write(`live ${direction} at ${String(rate)} Mbit/s: ${String(seen.length)} updates over ${spanS.toFixed(1)} s, median of the second half ${lateMedian.toFixed(1)} Mbit/s\n`);
      expect(spanS).toBeGreaterThan(1);
      expect(seen.length / spanS, `${direction}: updates a second`).toBeGreaterThanOrEqual(4);
      // The live figure shows what is moving: near the result, though it decides nothing (a
      // quarter either way). Held at 5 and 20 Mbit/s, where a direction's last transfers last a
      // second or more; at 200 the page's uploads are 200 ms apart and half as long, and the
      // one-second window spans those pauses (it read about 20% under there).
      if (rate <= 20) expect(within(lateMedian, direction === 'download' ? page.down : page.up, 0.25), `${direction}: live ${lateMedian.toFixed(1)} against the result`).toBe(true);
    }
    expect(page.browserNote).toBe(false);
    // The headline is the command line's rules on the same transfers: the export's transfers and
    // round trips through the CLI's functions give exactly the figures the page shows.
    expect(page.headline.download).not.toBeNull();
    expect(cliRules(page.exported)).toEqual(page.headline);
    const misses = [
      within(cli.download_mbps, ref.down, 0.05) ? '' : `CLI download ${String(cli.download_mbps)} against ${ref.down.toFixed(1)}`,
      within(cli.upload_mbps, ref.up, 0.05) ? '' : `CLI upload ${String(cli.upload_mbps)} against ${ref.up.toFixed(1)}`,
      within(page.down, ref.down, 0.05) ? '' : `page download ${page.down.toFixed(1)} against ${ref.down.toFixed(1)}`,
      within(page.up, ref.up, 0.05) ? '' : `page upload ${page.up.toFixed(1)} against ${ref.up.toFixed(1)}`,
    ].filter((miss) => miss !== '');
    expect(misses).toEqual([]);
  }, 600_000);

  it('loaded latency follows the queue: 300 ms of queue adds at least 100 ms more than 5 ms does, and the grade drops', async () => {
    // The 300 ms queue at 5 Mbit/s, so the light test's 1 MB transfers (1.6 s each) are long enough
    // to fill it (190 kB): at 20 Mbit/s they end before CUBIC's window outgrows it. The 5 ms queue at
    // 20 Mbit/s: at 5 Mbit/s it holds about four full frames, CUBIC's drops then hit the loaded round
    // trips themselves, and one whose answer is dropped waits for a retransmission, so it measured
    // loss recovery (+108 to +216 ms in one benchmark run) rather than a queue. At 20 Mbit/s it holds
    // about ten and reads +2 to +5 ms.
    link.shape(20, 5);
    const small = await speedtest('light');
    const smallPage = await pageTest('light');
    link.shape(5, 300);
    const large = await speedtest('light');
    const largePage = await pageTest('light');
    process.stdout.write(`bufferbloat: CLI 5 ms queue at 20 Mbit/s +${String(small.loaded_latency_increase_ms)} ms (${String(small.bufferbloat_grade)}), 300 ms queue at 5 Mbit/s +${String(large.loaded_latency_increase_ms)} ms (${String(large.bufferbloat_grade)}); page +${smallPage.bloat?.toFixed(1) ?? 'null'} ms (${smallPage.grade}), +${largePage.bloat?.toFixed(1) ?? 'null'} ms (${largePage.grade})\n`);
    expect(small.loaded_latency_increase_ms).not.toBeNull();
    expect(large.loaded_latency_increase_ms).not.toBeNull();
    expect((large.loaded_latency_increase_ms ?? 0) - (small.loaded_latency_increase_ms ?? 0)).toBeGreaterThanOrEqual(100);
    expect(['A+', 'A', 'B']).toContain(small.bufferbloat_grade);
    expect(['C', 'D', 'F']).toContain(large.bufferbloat_grade);
    // The page: the same difference and grades.
    expect(smallPage.bloat).not.toBeNull();
    expect(largePage.bloat).not.toBeNull();
    expect((largePage.bloat ?? 0) - (smallPage.bloat ?? 0)).toBeGreaterThanOrEqual(100);
    expect(['A+', 'A', 'B']).toContain(smallPage.grade);
    expect(['C', 'D', 'F']).toContain(largePage.grade);
    // The answer first: the small queue's line names no lag; the large one's names it as the cause.
    process.stdout.write(`verdict lines: ${String(smallPage.verdict)} | ${String(largePage.verdict)}\n`);
    expect(smallPage.verdict).toMatch(/^Good for /);
    expect(smallPage.verdict).not.toMatch(/bufferbloat/);
    expect(largePage.verdict).toMatch(/: latency grows by [0-9.]+ ms while the line is busy \(bufferbloat [CDF]\)\.$/);
  }, 600_000);

  it('with a 20 ms delay line, idle latency is within 2 ms of curl\'s time to first byte on a warm connection', async () => {
    link.shape(200, 20);
    const relay: DelayRelay = await startDelayRelay({ host: link.serverAddress, port: 8080 }, 10);
    try {
      const url = `http://127.0.0.1:${String(relay.port)}`;
      // Two requests on one connection: the second's time to first byte is one warm round trip.
      const firsts: number[] = [];
      for (let i = 0; i < 5; i++) {
        const { stdout } = await exec('curl', ['-s', '-o', '/dev/null', '-o', '/dev/null', '-w', '%{time_starttransfer} %{time_pretransfer}\\n', `${url}/__down?bytes=0`, `${url}/__down?bytes=0`]);
        const second = stdout.trim().split('\n')[1]?.split(' ').map(Number) ?? [];
        firsts.push(((second[0] ?? 0) - (second[1] ?? 0)) * 1000);
      }
      firsts.sort((a, b) => a - b);
      const curlMs = firsts[2] ?? 0;
      const cli = await speedtest('light', url);
      process.stdout.write(`idle latency through a 20 ms delay line: curl ${curlMs.toFixed(2)} ms, netdiag ${String(cli.latency_ms)} ms\n`);
      expect(curlMs).toBeGreaterThanOrEqual(20);
      expect(Math.abs((cli.latency_ms ?? 0) - curlMs)).toBeLessThanOrEqual(2);
    } finally {
      await relay.close();
    }
  }, 300_000);
});
