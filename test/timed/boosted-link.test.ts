// The speed test on links that give a new flow a burst first ("PowerBoost"): tbf with a peak rate
// on a router namespace between this namespace and the server's (test/support/shaped-link.ts, the
// server sending with CUBIC). The reference is a bulk download timed every 100 ms on the same
// link after its bucket refilled (test/support/burst-reference.ts): the rate it sustains once the
// bucket is spent, the peak in its first second, the bytes it carried above the sustained rate.
// `netdiag speedtest` (the default, full test) must report the sustained rate each way within 10%,
// and name the burst with its peak within 15% and its size within 30%; the page must read the
// sustained rate each way within 10% and name the burst; on a plain link neither names one. Both directions are
// shaped alike, so the upload is held to the download's reference.
import { setTimeout as sleep } from 'node:timers/promises';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { measureBurstReference, referenceBytes } from '../support/burst-reference.js';
import { canMakeNetns } from '../support/netns.js';
import { CLI, runCli } from '../support/process.js';
import { createShapedLink, serveOnLink, type ShapedLink } from '../support/shaped-link.js';
import { requireCommands } from '../support/system.js';

const ready = requireCommands('speed test on boosted links', ['ip', 'tc', 'chromium'], 'iproute2 chromium') && canMakeNetns();

interface Burst {
  peak_mbps: number;
  bytes: number;
  duration_ms: number;
}

interface Report {
  download_mbps: number | null;
  upload_mbps: number | null;
  download_burst: Burst | null;
  upload_burst: Burst | null;
  duration_ms: number;
}

/** tbf shapes: the sustained rate, the peak, and the bucket spent at the peak. */
const BOOSTED = [
  { rate: 20, peak: 40, bucket: 4_000_000 },
  { rate: 100, peak: 200, bucket: 20_000_000 },
] as const;

describe.skipIf(!ready)('speed test on boosted links', () => {
  let link: ShapedLink;
  let browser: Browser;
  let served: Awaited<ReturnType<typeof serveOnLink>>;
  let base: string;

  beforeAll(async () => {
    link = createShapedLink();
    served = await serveOnLink(link, CLI, { NETDIAG_RATE_LIMITS: 'speedtest=100000' });
    base = served.base;
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'], timeout: 20_000 });
  }, 30_000);

  afterAll(async () => {
    await browser.close();
    await served.stop();
    link.destroy();
  });

  /** Waits for the link's bucket to refill: it refills at the sustained rate, so bucket / rate, and a second more. */
  const refill = (shape: { rate: number; bucket: number }) => sleep((shape.bucket / ((shape.rate * 1e6) / 8)) * 1000 + 1000);

  async function speedtest(): Promise<Report> {
    const run = await runCli(['speedtest', '--json', '--no-analytics', '--no-packet-loss', '--url', base, '--timeout', '30'], {}, 240_000);
    expect(run.code, run.stderr).toBe(0);
    return JSON.parse(run.stdout) as Report;
  }

  interface PageRates {
    down: number;
    up: number;
    downBurst: string | null;
    upBurst: string | null;
  }

  /** The page's default test in Chromium: the rates it shows and whether it names a burst under each. */
  async function pageTest(): Promise<PageRates> {
    const context = await browser.newContext();
    const page = await context.newPage();
    // What the browser said, for a run that does not end in "Done.".
    const log: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') log.push(`console ${message.type()}: ${message.text()}`);
    });
    page.on('requestfailed', (request) => log.push(`request failed: ${request.method()} ${request.url()} ${request.failure()?.errorText ?? ''}`));
    try {
      await page.goto(`${base}/`);
      await page.waitForSelector('#speed-start:not([disabled])');
      expect(await page.inputValue('#speed-mode')).toBe('full');
      await page.click('#speed-start');
      await expect.poll(() => page.textContent('#speed-status'), { timeout: 120_000, interval: 500 }).toMatch(/^(Done\.|The test did not finish\.)$/);
      expect(await page.textContent('#speed-status'), [(await page.textContent('#speed-error')) ?? '', ...log].join('\n')).toBe('Done.');
      const figure = (name: string) => page.getAttribute(`#speed-results [data-metric="${name}"]`, 'data-value').then((v) => Number(v) / 1e6);
      const burst = (name: string) => page.getAttribute(`#speed-results [data-metric="${name}"]`, 'data-burst-peak');
      return { down: await figure('download'), up: await figure('upload'), downBurst: await burst('download'), upBurst: await burst('upload') };
    } finally {
      await context.close();
    }
  }

  const within = (value: number | undefined | null, reference: number, share: number) => value !== undefined && value !== null && Math.abs(value - reference) <= reference * share;

  it.each(BOOSTED)('at $rate Mbit/s after a $bucket-byte bucket at $peak, the CLI reports the sustained rate and names the burst each way', async (shape) => {
    link.shape(shape.rate, 20, shape.bucket, shape.peak);
    await refill(shape);
    const reference = await measureBurstReference(base, referenceBytes(shape.rate, shape.peak, shape.bucket));
    await refill(shape);
    const cli = await speedtest();
    process.stdout.write(
      `boosted ${String(shape.rate)}/${String(shape.peak)} Mbit/s, ${String(shape.bucket / 1e6)} MB: reference ${reference.sustainedMbps.toFixed(1)} sustained, peak ${reference.peakMbps.toFixed(1)}, ${(reference.burstBytes / 1e6).toFixed(2)} MB above; ` +
        `CLI ${String(cli.download_mbps)} / ${String(cli.upload_mbps)}, bursts ${JSON.stringify(cli.download_burst)} / ${JSON.stringify(cli.upload_burst)}, ${String(cli.duration_ms)} ms\n`,
    );
    expect(within(cli.download_mbps, reference.sustainedMbps, 0.1), 'download').toBe(true);
    expect(within(cli.upload_mbps, reference.sustainedMbps, 0.1), 'upload').toBe(true);
    for (const burst of [cli.download_burst, cli.upload_burst]) {
      expect(within(burst?.peak_mbps, reference.peakMbps, 0.15), `peak ${JSON.stringify(burst)}`).toBe(true);
      expect(within(burst?.bytes, reference.burstBytes, 0.3), `size ${JSON.stringify(burst)}`).toBe(true);
    }
  }, 300_000);

  it.each(BOOSTED)('at $rate Mbit/s after a $bucket-byte bucket at $peak, the page reads the sustained rate each way and names the burst under it', async (shape) => {
    link.shape(shape.rate, 20, shape.bucket, shape.peak);
    await refill(shape);
    const reference = await measureBurstReference(base, referenceBytes(shape.rate, shape.peak, shape.bucket));
    await refill(shape);
    const page = await pageTest();
    process.stdout.write(`boosted ${String(shape.rate)}/${String(shape.peak)} Mbit/s, page: ${page.down.toFixed(1)} / ${page.up.toFixed(1)} against ${reference.sustainedMbps.toFixed(1)} sustained; bursts ${String(page.downBurst)} / ${String(page.upBurst)} bit/s\n`);
    expect(within(page.down, reference.sustainedMbps, 0.1), 'download').toBe(true);
    expect(within(page.up, reference.sustainedMbps, 0.1), 'upload').toBe(true);
    expect(page.downBurst).not.toBeNull();
    expect(page.upBurst).not.toBeNull();
  }, 300_000);

  it('on a plain 20 Mbit/s link neither the CLI nor the page names a burst', async () => {
    link.shape(20, 20);
    const cli = await speedtest();
    const page = await pageTest();
    process.stdout.write(`plain 20 Mbit/s: CLI ${String(cli.download_mbps)} / ${String(cli.upload_mbps)} in ${String(cli.duration_ms)} ms, page ${page.down.toFixed(1)} / ${page.up.toFixed(1)}\n`);
    expect(cli.download_burst).toBeNull();
    expect(cli.upload_burst).toBeNull();
    expect(page.downBurst).toBeNull();
    expect(page.upBurst).toBeNull();
  }, 300_000);
});
