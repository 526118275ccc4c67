// The page's speed test under a speed-test limit lowered on purpose, against the real server
// (web/speedtest/speedtest.ts, src/common/rate-limit.ts): it meets the limit, says it is waiting, waits
// the Retry-After, measures again what the refusal cut, finishes with its figures, and its result
// says it waited.
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogue } from '../support/catalogues.js';
import { spendSpeedtestWindow } from '../support/rate-window.js';
import { LOOPBACK_TRANSFERS, startTestServer, type TestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';

const ready = requireCommands('page under a lowered limit', ['chromium'], 'chromium');
const en = catalogue('en');

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
    // A limit a whole light test fits in (150 to 400 requests here), nearly used up first
    // (support/rate-window.ts): the test meets it within its first requests, waits the rest of
    // the window once, and runs on in a fresh one, whatever a test costs on this machine.
    const limit = 1_000;
    const limited = await startTestServer({ ...LOOPBACK_TRANSFERS, NETDIAG_EVENTS_SINK: 'none', NETDIAG_RATE_LIMITS: `speedtest=${String(limit)}` });
    servers.push(limited);
    await spendSpeedtestWindow(limited.url, limit - 5);
    const page = await browser.newPage();
    const statuses = await lightTest(page, limited.url);
    process.stdout.write(`page rate limit: at a limit of ${String(limit)}, ${String(limit - 5)} used first: ${statuses.filter((s) => s.includes('rate limit')).join(' | ')}\n`);
    expect(statuses.filter((s) => s.includes('rate limit'))).toHaveLength(1);
    expect(statuses.at(-1), (await page.textContent('#speed-error')) ?? '').toBe(en['speed.done']);
    expect(statuses.some((s) => /^The server's rate limit refused a request; waiting [0-9]+\ss as it asks, then measuring again\.$/.test(s))).toBe(true);
    const note = await page.textContent('#speed-limit-note');
    expect(await page.isVisible('#speed-limit-note')).toBe(true);
    expect(note).toMatch(/^The server's rate limit refused some of the test's requests: the test waited [0-9]+\ss in all/);
    await page.screenshot({ path: 'test-results/rate-limit-page.png', fullPage: true });
    for (const metric of ['download', 'upload', 'latency']) expect(await page.textContent(`#speed-results [data-metric="${metric}"] .value`), metric).toMatch(/[0-9]/);
  });
});
