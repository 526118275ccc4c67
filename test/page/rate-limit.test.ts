// The page's speed test under a speed-test limit lowered on purpose, against the real server
// (web/speedtest.ts, src/common/rate-limit.ts): it meets the limit, says it is waiting, waits
// the Retry-After, measures again what the refusal cut, finishes with its figures, and its result
// says it waited. The limit is set from what one test costs on this machine (an unlimited run
// first), below one test and above any of its parts, so the test meets it once.
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogue } from '../support/catalogues.js';
import { LOOPBACK_TRANSFERS, startTestServer, type TestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';

const ready = requireCommands('page under a lowered limit', ['chromium'], 'chromium');
const en = catalogue('en');

/** The speed-test requests a server has answered (its /metrics). */
async function targetRequests(server: TestServer): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${String(server.running.metricsPort)}/metrics`)).text();
  return text
    .split('\n')
    .filter((l) => l.startsWith('netdiag_http_requests_total{') && (l.includes('route="/__down"') || l.includes('route="/__up"')))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
}

/** Starts the page's light test and resolves with every status it showed, once it is done or has failed. */
async function lightTest(page: Page, url: string): Promise<string[]> {
  await page.goto(`${url}/?lang=en`);
  await page.waitForSelector('#speed-start:not([disabled])');
  await page.selectOption('#speed-mode', 'light');
  await page.evaluate(() => {
    const seen: string[] = [];
    (window as unknown as { seenStatuses: string[] }).seenStatuses = seen;
    const status = document.querySelector('#speed-status') as HTMLElement;
    new MutationObserver(() => seen.push(status.textContent)).observe(status, { childList: true, characterData: true, subtree: true });
  });
  await page.click('#speed-start');
  await page.waitForFunction((ends) => ends.includes(document.querySelector('#speed-status')?.textContent ?? ''), [en['speed.done'], en['speed.not-finished']], { timeout: 200_000, polling: 250 });
  return page.evaluate(() => (window as unknown as { seenStatuses: string[] }).seenStatuses);
}

describe.skipIf(!ready)('the page under a speed-test limit lowered on purpose', () => {
  let browser: Browser;
  const servers: TestServer[] = [];
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'], timeout: 20_000 });
  }, 60_000);
  afterAll(async () => {
    await browser.close();
    for (const s of servers) await s.close();
  });

  it('waits the Retry-After, says so while it waits, finishes with its figures and its result says it waited', { timeout: 300_000 }, async () => {
    const free = await startTestServer({ ...LOOPBACK_TRANSFERS, NETDIAG_EVENTS_SINK: 'none', NETDIAG_RATE_LIMITS: 'speedtest=100000', NETDIAG_METRICS_PORT: '0' });
    servers.push(free);
    const page = await browser.newPage();
    expect(await lightTest(page, free.url)).toContain(en['speed.done']);
    const cost = await targetRequests(free);
    const limit = Math.ceil(cost * 0.75);
    const limited = await startTestServer({ ...LOOPBACK_TRANSFERS, NETDIAG_EVENTS_SINK: 'none', NETDIAG_RATE_LIMITS: `speedtest=${String(limit)}`, NETDIAG_METRICS_PORT: '0' });
    servers.push(limited);
    const statuses = await lightTest(page, limited.url);
    process.stdout.write(`page rate limit: a light test cost ${String(cost)} requests; at a limit of ${String(limit)}: ${statuses.filter((s) => s.includes('rate limit')).join(' | ')}\n`);
    expect(statuses.at(-1), (await page.textContent('#speed-error')) ?? '').toBe(en['speed.done']);
    expect(statuses.some((s) => /^The server's rate limit refused a request; waiting [0-9]+\ss as it asks, then measuring again\.$/.test(s))).toBe(true);
    const note = await page.textContent('#speed-limit-note');
    expect(await page.isVisible('#speed-limit-note')).toBe(true);
    expect(note).toMatch(/^The server's rate limit refused some of the test's requests: the test waited [0-9]+\ss in all/);
    await page.screenshot({ path: 'test-results/rate-limit-page.png', fullPage: true });
    for (const metric of ['download', 'upload', 'latency']) expect(await page.textContent(`#speed-results [data-metric="${metric}"] .value`), metric).toMatch(/[0-9]/);
  });
});
