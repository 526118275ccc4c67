// The page's watch in Debian's chromium against a real server and a real `netdiag probe`: this
// server and one region at 1 s for 10 s, the chart and table drawn, a CSV whose rows are the polls
// the server saw (counted in its access log); and a probe limit set low, whose 429s show as
// limited, never as failures. Screenshots at 1280 and 390 px go to test-results/.
import { mkdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProbeProcess, type ProbeProcess } from '../support/probe.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';
import { eventually, freePort } from '../support/wait.js';
import { openWatched } from '../support/watched-page.js';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = fileURLToPath(new URL('../../test-results/', import.meta.url));
const ready = requireCommands('the watch in chromium', ['chromium'], 'chromium');

const HEALTH = '/v1/health';
const PROBE = '/v1/latency/regions/:region/probe';

/** Requests the server logged for a route so far (its access log: route and status, nothing of the caller). */
const logged = (server: TestServer, route: string) => server.logs().filter((l) => l.route === route).length;

async function watchFor(page: Page, seconds: number): Promise<void> {
  await page.fill('#watch-interval', '1');
  await page.check('#watch-regions input[value="weur"]');
  await page.click('#watch-start');
  await page.waitForTimeout(seconds * 1000);
  await page.click('#watch-stop');
  // A poll in flight at Stop is still recorded; give it time to land.
  await page.waitForTimeout(1500);
}

async function exported(page: Page, button: string): Promise<string> {
  const [file] = await Promise.all([page.waitForEvent('download'), page.click(button)]);
  return readFileSync(await file.path(), 'utf8');
}

describe.skipIf(!ready)('the watch in headless Chromium', () => {
  let browser: Browser;
  let probe: ProbeProcess;
  let server: TestServer;
  let limited: TestServer;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    probe = await startProbeProcess({ host: '127.0.0.1', port: await freePort() });
    const common = { NETDIAG_PROBES: `weur=http://127.0.0.1:${String(probe.port)}`, NETDIAG_ACCESS_LOG: 'on' };
    server = await startTestServer({ ...common, NETDIAG_RATE_LIMITS: 'probe=1000' });
    limited = await startTestServer({ ...common, NETDIAG_RATE_LIMITS: 'probe=4' });
    for (const s of [server, limited]) expect(await eventually(() => s.logs().some((l) => l.msg === 'probe reachable'), 10_000)).toBe(true);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'], timeout: 20_000 });
  }, 40_000);
  afterAll(async () => {
    await browser.close();
    await Promise.all([server.close(), limited.close()]);
    await probe.kill('SIGTERM');
  });

  it('watches this server and a region at 1 s for 10 s: chart, table, and a CSV of exactly the polls the server saw', async () => {
    const { page, context, requested, refused } = await openWatched(browser, `${server.url}/`);
    await page.waitForSelector('#regions li[data-region="weur"] .detail');
    // The regional section's own requests are done; what the server logs from here on is the watch's.
    await page.fill('#watch-interval', '1');
    await page.check('#watch-regions input[value="weur"]');
    expect(await page.textContent('#watch-budget')).toBe('60 probe requests a minute, within this server\'s 1,000 per minute.');
    await page.uncheck('#watch-regions input[value="weur"]');
    const healthBefore = logged(server, HEALTH);
    const probesBefore = logged(server, PROBE);
    await watchFor(page, 10);
    const healthPolls = logged(server, HEALTH) - healthBefore;
    const probePolls = logged(server, PROBE) - probesBefore;
    expect(healthPolls).toBeGreaterThanOrEqual(9);
    expect(healthPolls).toBeLessThanOrEqual(12);
    expect(probePolls).toBeGreaterThanOrEqual(9);

    const csv = (await exported(page, '#watch-export-csv')).trimEnd().split('\n');
    expect(csv[0]).toBe('time,target,rtt_ms,status');
    const rows = csv.slice(1).map((line) => line.split(','));
    expect(rows.filter((r) => r[1] === 'server')).toHaveLength(healthPolls);
    expect(rows.filter((r) => r[1] === 'weur')).toHaveLength(probePolls);
    for (const r of rows) {
      expect(r[3]).toBe('ok');
      expect(Number(r[2])).toBeGreaterThan(0);
    }
    const json = JSON.parse(await exported(page, '#watch-export-json')) as unknown[];
    expect(json).toHaveLength(rows.length);

    // The table: a row per target, its figures in ms, nothing failed or limited.
    for (const [target, label] of [['server', 'you → this server'], ['weur', 'this server → Western Europe']] as const) {
      const cells = await page.locator(`#watch-table tr[data-target="${target}"] td`).allTextContents();
      // Named as over its chart.
      expect(cells[0]).toBe(label);
      expect(await page.locator(`#watch-charts figure:has(svg[data-target="${target}"]) figcaption`).textContent()).toBe(label);
      for (const figure of cells.slice(1, 6)) expect(figure).toMatch(/^[0-9.,]+\sms$/);
      expect(cells[6]).toBe(`0 of ${String(rows.filter((r) => r[1] === target).length)}`);
      expect(cells[7]).toBe('0');
      // The chart: the median line, a band per span, the ms axis, no failure marked.
      const chart = page.locator(`#watch-charts svg[data-target="${target}"]`);
      expect(await chart.locator('polyline.median').count()).toBe(1);
      expect(await chart.locator('rect.band').count()).toBeGreaterThanOrEqual(9);
      expect(await chart.locator('text', { hasText: /^ms$/ }).count()).toBe(1);
      expect(await chart.locator('rect.failed').count()).toBe(0);
    }
    await page.locator('#watch-table').evaluate((table) => {
      table.scrollIntoView({ block: 'start' });
    });
    await page.screenshot({ path: `${ARTIFACTS}page-watch-desktop.png`, fullPage: false });
    // Nothing left the browser but the polls, to this server only.
    expect(requested.filter((url) => !url.startsWith(`${server.url}/`))).toEqual([]);
    expect(await refused()).toEqual([]);

    // Kept only when asked: the watch's summary goes to the history this browser keeps, with the
    // figures the table showed, and stays there across a reload; no request carries it.
    const shownRow = async (target: string) => page.locator(`#watch-table tr[data-target="${target}"] td`).allTextContents();
    const [serverRow, regionRow] = [await shownRow('server'), await shownRow('weur')];
    expect(await page.isVisible('#history-watches')).toBe(false);
    await page.click('#watch-keep');
    await expect.poll(() => page.textContent('#watch-keep')).toBe('Kept in your history');
    const expected = [serverRow, regionRow].map((r) => `${r[0] ?? ''}: median ${r[3] ?? ''}, p95 ${r[4] ?? ''}, ${r[6] ?? ''} failed`).join('; ');
    const keptRows = async () => page.$$eval('#history-watches tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].slice(0, 4).map((td) => td.textContent)));
    const kept = await keptRows();
    expect(kept).toHaveLength(1);
    expect(kept[0]?.[1]).toBe('1\u00a0s');
    expect(kept[0]?.[3]).toBe(expected);
    const requestsBefore = requested.length;
    await page.reload();
    await expect.poll(() => keptRows()).toEqual(kept);
    expect(await page.textContent('#history-status')).toBe('0 results and 1 watch summary kept in this browser.');
    expect(requested.slice(requestsBefore).filter((url) => /Western|median|watch-history/.test(decodeURIComponent(url)))).toEqual([]);
    await context.close();

    const phone = await openWatched(browser, `${server.url}/`, 390, 844);
    await phone.page.waitForSelector('#regions li[data-region="weur"] .detail');
    await watchFor(phone.page, 3);
    await phone.page.locator('#watch-table').evaluate((table) => {
      table.scrollIntoView({ block: 'start' });
    });
    await phone.page.screenshot({ path: `${ARTIFACTS}page-watch-phone.png`, fullPage: false });
    expect(await phone.page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await phone.context.close();
  }, 60_000);

  it('with a probe limit set low, the refused polls show as limited, not as failures, and the page says why', async () => {
    const { page, context } = await openWatched(browser, `${limited.url}/`);
    await page.waitForSelector('#regions li[data-region="weur"] .detail');
    await watchFor(page, 6);
    const rows = (await exported(page, '#watch-export-csv')).trimEnd().split('\n').slice(1).map((line) => line.split(','));
    const weur = rows.filter((r) => r[1] === 'weur');
    expect(weur.filter((r) => r[3] === 'limited').length).toBeGreaterThan(0);
    expect(weur.filter((r) => r[3] === 'failed')).toEqual([]);
    for (const r of weur.filter((x) => x[3] === 'limited')) expect(r[2]).toBe('');
    const cells = await page.locator('#watch-table tr[data-target="weur"] td').allTextContents();
    expect(cells[6]).toBe(`0 of ${String(weur.length)}`);
    expect(cells[7]).toBe(String(weur.filter((r) => r[3] === 'limited').length));
    const chart = page.locator('#watch-charts svg[data-target="weur"]');
    expect(await chart.locator('rect.limited').count()).toBeGreaterThan(0);
    expect(await chart.locator('rect.failed').count()).toBe(0);
    // The limit the server states (RateLimit-Limit) replaces the default in what the page says.
    expect(await page.textContent('#watch-budget')).toBe("1 region every 1\u00a0s is 60 probe requests a minute, more than this server's 4: some polls will be refused and shown as limited. Every 15\u00a0s or more fits.");
    await context.close();
  }, 60_000);
});
