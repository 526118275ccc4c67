// The page's history in Debian's chromium: three light tests over loopback are kept and listed
// after a reload, one deleted, the rest exported (JSON and CSV), deleted and imported back to the
// same table; a wrong file is refused with its reason and nothing changes. Every request the page
// makes is recorded, and none carries any of the history. Screenshots go to test-results/.
import { mkdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = fileURLToPath(new URL('../../test-results/', import.meta.url));
const ready = requireCommands('page history in chromium', ['chromium'], 'chromium');

describe.skipIf(!ready)('the history the page keeps in the browser', () => {
  let server: TestServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  /** Every request of the context: its URL and body. */
  const requests: { url: string; body: string }[] = [];

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    server = await startTestServer({ NETDIAG_RATE_LIMITS: 'speedtest=100000' });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'], timeout: 20_000 });
    context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
    context.on('request', (request) => {
      requests.push({ url: request.url(), body: request.postData() ?? '' });
    });
    page = await context.newPage();
  }, 30_000);

  afterAll(async () => {
    await browser.close();
    await server.close();
  });

  /** The table's rows as shown: every cell but the delete button's. */
  const rows = () => page.$$eval('#history-table tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].slice(0, 7).map((td) => td.textContent)));

  async function runLightTest(): Promise<string[]> {
    await page.waitForSelector('#speed-start:not([disabled])');
    await page.selectOption('#speed-mode', 'light');
    await page.click('#speed-start');
    await expect.poll(() => page.textContent('#speed-status'), { timeout: 60_000, interval: 250 }).toBe('Done.');
    const value = async (name: string) => ((await page.textContent(`#speed-results [data-metric="${name}"] .value`)) ?? '').trim();
    return [await value('download'), await value('upload'), await value('latency')];
  }

  it('keeps three tests across a reload, deletes one, exports, clears and imports back the same table, and sends none of it', async () => {
    await page.goto(`${server.url}/`);
    await expect.poll(() => page.textContent('#history-status')).toBe('No results kept yet: each test you run here is added.');
    // Nothing kept yet: no empty table, chart or buttons, though their row is laid out as a flex box.
    for (const part of ['#history-table', '#history-chart-figure', '#history-actions']) expect(await page.isVisible(part), part).toBe(false);
    // This server has no regional probes: no empty box of regions to pick, no empty list, a note.
    await expect.poll(() => page.textContent('#regions-note')).toBe('This server has no regional probes configured.');
    expect(await page.isVisible('#watch-regions')).toBe(false);
    expect(await page.isVisible('#regions')).toBe(false);
    // The embedded geo data's licence: its credit in the footer.
    expect(await page.textContent('#credits')).toBe(
      'Location and network data: IP geolocation by DB-IP (db-ip.com), CC BY 4.0; time zones from boundaries © OpenStreetMap contributors, ODbL; network names from RouteViews and DB-IP (db-ip.com), CC BY 4.0.',
    );
    // The engine's per-measurement console.log lines are gone from the bundle.
    const logged: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'log') logged.push(message.text());
    });
    const shown: string[][] = [];
    for (let i = 1; i <= 3; i++) {
      shown.push(await runLightTest());
      await expect.poll(async () => (await rows()).length).toBe(i);
      // The light test takes latency under load too (round trips beside its load): the classes
      // are known, and the verdict line above the figures says what the connection is good for.
      expect(await page.textContent('#speed-verdict')).toMatch(/^(Good|Fair|Poor) for /);
    }
    expect(logged).toEqual([]);
    await page.reload();
    await expect.poll(() => page.textContent('#history-status')).toBe('3 results kept in this browser.');
    const listed = await rows();
    // Newest first; each row's mode (with the streams the test ran) and figures as the test showed them.
    expect(listed.map((r) => [r[1], r[2], r[3], r[4]])).toEqual([...shown].reverse().map((s) => ['light, 4 streams', ...s]));
    await page.waitForSelector('#history-chart-figure:not([hidden])');
    expect(await page.locator('#history-chart polyline.trend.down').count()).toBe(1);
    await page.screenshot({ path: `${ARTIFACTS}page-history-desktop.png`, fullPage: true });

    // Delete the middle one: two left, and still two after a reload.
    await page.click('#history-table tbody tr:nth-child(2) button');
    await expect.poll(async () => (await rows()).length).toBe(2);
    const kept = await rows();
    expect(kept).toEqual([listed[0], listed[2]]);
    await page.reload();
    await expect.poll(() => rows()).toEqual(kept);

    // Export both ways, delete all, import each back: the same table.
    const [json] = await Promise.all([page.waitForEvent('download'), page.click('#history-export-json')]);
    const jsonText = readFileSync(await json.path(), 'utf8');
    const [csv] = await Promise.all([page.waitForEvent('download'), page.click('#history-export-csv')]);
    const csvPath = await csv.path();
    const exported = JSON.parse(jsonText) as { netdiag_history: number; results: { tested_at: string; mode: string }[] };
    expect(exported.results.map((r) => r.mode)).toEqual(['light', 'light']);
    for (const file of [{ name: 'history.json', mimeType: 'application/json', buffer: Buffer.from(jsonText) }, { name: 'history.csv', mimeType: 'text/csv', buffer: readFileSync(csvPath) }]) {
      await page.click('#history-clear');
      await expect.poll(() => page.textContent('#history-status')).toBe('No results kept yet: each test you run here is added.');
      expect(await page.isHidden('#history-table')).toBe(true);
      await page.setInputFiles('#history-import', file);
      await expect.poll(() => rows()).toEqual(kept);
    }

    // A file with a wrong result: refused, said why, the table as it was.
    await page.setInputFiles('#history-import', { name: 'bad.json', mimeType: 'application/json', buffer: Buffer.from(jsonText.replace('"mode": "light"', '"mode": "turbo"')) });
    await expect.poll(() => page.textContent('#history-error')).toBe('bad.json was not imported: result 1: its mode is neither light nor full.');
    expect(await rows()).toEqual(kept);

    // At phone width: no sideways scrolling of the page (the table scrolls in its own box).
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.locator('#history-h').scrollIntoViewIfNeeded();
    await page.screenshot({ path: `${ARTIFACTS}page-history-phone.png`, fullPage: false });

    // No request carried the history: not its stored form, not its times, not the export.
    const stored = await page.evaluate(() => localStorage.getItem('netdiag.history') ?? '');
    const storedResults = (JSON.parse(stored) as { results: string[] }).results;
    expect(storedResults.length).toBe(2);
    const marks = [...storedResults, ...exported.results.map((r) => r.tested_at), ...exported.results.map((r) => String(Date.parse(r.tested_at))), 'netdiag_history'];
    expect(requests.length).toBeGreaterThan(30);
    const carrying = requests.filter((r) => marks.some((m) => r.url.includes(m) || r.body.includes(m)));
    expect(carrying).toEqual([]);

    // A stored history this version cannot read is left alone and said, and "Delete all" is
    // still offered, the one way out; a test meanwhile adds nothing over it.
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.evaluate(() => {
      localStorage.setItem('netdiag.history', '{"v":2,"results":[]}');
    });
    await page.reload();
    await expect.poll(() => page.textContent('#history-error')).toBe(
      'The history kept in this browser cannot be read (what is stored is not a version 1 history (a newer netdiag may have written it)); it is left as it is, and nothing is added to it. "Delete all" removes it.',
    );
    await runLightTest();
    expect(await page.evaluate(() => localStorage.getItem('netdiag.history'))).toBe('{"v":2,"results":[]}');
    expect(await page.isVisible('#history-export-json')).toBe(false);
    await page.click('#history-clear');
    await expect.poll(() => page.textContent('#history-status')).toBe('No results kept yet: each test you run here is added.');
    expect(await page.isVisible('#history-error')).toBe(false);
  }, 180_000);
});
