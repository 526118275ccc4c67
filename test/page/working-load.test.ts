// The default speed test in Debian's chromium against this server, under its default rate limits:
// the engine takes the idle latency, then the page loads each direction with parallel streams
// (web/speedtest/working-load.ts) and reports by the rules the command line shares
// (src/common/speedtest/working.ts). The export carries the counts exactly as the page measured
// them: the rules over them give the page's figure again, to the bit per second. No figure of
// the machine's speed is asserted, only that the page reports what it counted.
import { mkdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedBps, sharedMs } from '../../src/common/speedtest/share.js';
import { measureDirection, PROFILES } from '../../src/common/speedtest/working.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { median } from '../support/link-truth.js';
import { requireCommands } from '../support/system.js';
import { openWatched } from '../support/watched-page.js';

const ARTIFACTS = fileURLToPath(new URL('../../test-results/', import.meta.url));
const ready = requireCommands('page in chromium', ['chromium'], 'chromium');

/** A direction as the JSON export writes it. */
interface ExportedDirection {
  streams: number;
  end_ms: number;
  window_ms: [number, number] | null;
  steady: boolean | null;
  progress: [number, number][];
  round_trips: [number, number][];
}

interface Exported {
  mode: string;
  figures: { download_mbps: number | null; upload_mbps: number | null; loaded_latency_down_ms: number | null; loaded_latency_up_ms: number | null };
  measured: { download: ExportedDirection | null; upload: ExportedDirection | null };
  round_trips_ms: { idle: number[]; loaded_down: number[]; loaded_up: number[] };
}

/** What the rules read of an exported direction. */
const remeasured = (d: ExportedDirection) =>
  measureDirection(
    d.progress.map(([atMs, bytes]) => ({ atMs, bytes })),
    d.round_trips.map(([atMs, ms]) => ({ atMs, ms })),
    d.end_ms,
    PROFILES.full,
  );

describe.skipIf(!ready)('the default speed test under working conditions, in Chromium', () => {
  let server: TestServer;
  let browser: Browser;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    // The default limits: the whole test must fit in them (600 requests a minute per caller).
    server = await startTestServer({ NETDIAG_EVENTS_SINK: 'none' });
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'], timeout: 20_000 });
  }, 30_000);

  afterAll(async () => {
    await browser.close();
    await server.close();
  });

  it('shows its figures, ends with "Done.", and its export gives the same figures by the rules', async () => {
    const { page, context, requested } = await openWatched(browser, `${server.url}/`);
    try {
      // Every live reading as it is written: when, which direction, what rate.
      await page.evaluate(() => {
        const live: { at: number; direction: string; bps: number }[] = [];
        (window as unknown as { live: typeof live }).live = live;
        const rate = document.querySelector<HTMLElement>('#speed-live-rate');
        if (rate === null) return;
        new MutationObserver(() => {
          if (rate.dataset.bps !== undefined) live.push({ at: performance.now(), direction: rate.dataset.direction ?? '', bps: Number(rate.dataset.bps) });
        }).observe(rate, { attributes: true, attributeFilter: ['data-bps'] });
      });
      await page.waitForSelector('#speed-start:not([disabled])');
      expect(await page.inputValue('#speed-mode')).toBe('full');
      await page.click('#speed-start');
      // The run is over when the page gives the Start button back (on its end, or on a failure).
      await page.waitForSelector('#speed-start:not([disabled])', { timeout: 90_000 });
      expect(await page.textContent('#speed-status'), (await page.textContent('#speed-error')) ?? '').toBe('Done.');
      await page.screenshot({ path: `${ARTIFACTS}page-working-load.png`, fullPage: true });
      expect(await page.isHidden('#speed-error')).toBe(true);

      // The figures are shown, each with how it was reached.
      const part = async (name: string, which: 'value' | 'detail') => (await page.textContent(`#speed-results [data-metric="${name}"] .${which}`)) ?? '';
      for (const name of ['download', 'upload']) {
        expect(await part(name, 'value')).toMatch(/^[0-9.,]+\sMbps$/);
        expect(await part(name, 'detail')).toMatch(/^(burst: .+; sustained: )?4 streams(, steady for [0-9.,]+\ss|; the rate did not settle: average of the last [0-9.,]+\ss)$/);
      }
      expect(await part('latency', 'value')).toMatch(/^[0-9.,]+\sms$/);
      expect(await part('loaded', 'value')).toMatch(/^[0-9.,]+\sms down, [0-9.,]+\sms up$/);
      expect(await part('loaded', 'detail')).toMatch(/^down: 9 in 10 of [0-9,]+\sround trips within [0-9.,]+\sms; up: 9 in 10 of [0-9,]+\sround trips within [0-9.,]+\sms$/);
      expect(await part('bufferbloat', 'value')).not.toBe('–');
      // The chart: a bar for each quarter second of each direction, each window shaded, each figure across it.
      expect(await page.locator('#speed-chart rect.window').count()).toBe(2);
      expect(await page.locator('#speed-chart line.reported').count()).toBe(2);

      // The export: the counts and round trips as the page measured them.
      const [json] = await Promise.all([page.waitForEvent('download'), page.click('#speed-export-json')]);
      const exported = JSON.parse(readFileSync(await json.path(), 'utf8')) as Exported;
      expect(exported.mode).toBe('full');
      for (const [name, direction] of [['download', exported.measured.download], ['upload', exported.measured.upload]] as const) {
        expect(direction, name).not.toBeNull();
        if (direction === null) continue;
        expect(direction.streams).toBe(4);
        const again = remeasured(direction);
        // The page's figure, exactly: the rules over what it exported, at a share link's precision.
        expect(sharedBps(again.sustained?.bps ?? NaN), name).toBe(Number(await page.getAttribute(`#speed-results [data-metric="${name}"]`, 'data-value')));
        expect([again.sustained?.startMs, again.sustained?.endMs]).toEqual(direction.window_ms);
        expect(again.sustained?.steady).toBe(direction.steady);
        const loaded = name === 'download' ? exported.figures.loaded_latency_down_ms : exported.figures.loaded_latency_up_ms;
        expect(loaded).toBe(sharedMs(again.loaded?.ms ?? NaN));
        expect(await page.locator(`#speed-chart rect.${name === 'download' ? 'down' : 'up'}`).count()).toBe(again.rates.length);
      }
      expect(exported.round_trips_ms.loaded_down.length).toBeGreaterThan(0);
      expect(exported.round_trips_ms.idle.length).toBeGreaterThan(0);

      // The live rate was written at least four times a second while each direction ran (the
      // median gap between readings at most 250 ms: the page writes every 200 ms, and a mean over
      // the whole direction fails by a slipped timer or two when this file shares the machine with
      // the rest of the suites, 3.97 a second in one full run), and once a direction was steady
      // its last reading was within a tenth of the figure it reported.
      const live = await page.evaluate(() => (window as unknown as { live: { at: number; direction: string; bps: number }[] }).live);
      for (const [name, direction] of [['download', exported.measured.download], ['upload', exported.measured.upload]] as const) {
        const readings = live.filter((l) => l.direction === name);
        expect(readings.length, name).toBeGreaterThan(4);
        const gaps = readings.slice(1).map((r, i) => r.at - (readings[i]?.at ?? 0));
        expect(median(gaps), `${name}: the median gap between live readings, ms`).toBeLessThanOrEqual(250);
        const reported = Number(await page.getAttribute(`#speed-results [data-metric="${name}"]`, 'data-value'));
        if (direction?.steady === true) expect(Math.abs((readings.at(-1)?.bps ?? 0) - reported) / reported, `${name}: the last live reading against the figure`).toBeLessThan(0.1);
      }

      // Well within the targets' rate limit.
      const targets = requested.filter((url) => /\/__(down|up)\b/.test(url));
      expect(targets.length).toBeLessThan(300);
    } finally {
      await context.close();
    }
  }, 120_000);
});
