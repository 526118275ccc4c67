// The page checked by axe-core (Deque's accessibility engine, WCAG 2.x A and AA rules) in Debian's
// chromium, after a speed test and with a history kept, at desktop and phone width, in light and
// dark: no violation. axe is injected into the page for the check, so the context bypasses the
// page's Content-Security-Policy (which, rightly, refuses any script but its own).
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';
import { addAxe, axeViolations } from '../support/axe.js';
import { requireCommands } from '../support/system.js';

const ready = requireCommands('page accessibility in chromium', ['chromium'], 'chromium');


describe.skipIf(!ready)('the page under axe-core', () => {
  let server: TestServer;
  let browser: Browser;

  beforeAll(async () => {
    server = await startTestServer({ NETDIAG_RATE_LIMITS: 'speedtest=100000' });
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'], timeout: 20_000 });
  }, 30_000);

  afterAll(async () => {
    await browser.close();
    await server.close();
  });

  // The four at once, each in its own context: what is checked is the page's markup and colours,
  // not a rate, and a light test lasts its five seconds a direction however it shares the machine
  // (one after another they took 88 s of a CI run, together about a quarter of that).
  const views: [number, 'light' | 'dark'][] = [
    [1280, 'light'],
    [1280, 'dark'],
    [390, 'light'],
    [390, 'dark'],
  ];
  it.concurrent.for(views)('at %s px in %s: no violation after a test, with a history shown', { timeout: 120_000 }, async ([width, colorScheme], { expect }) => {
    const context = await browser.newContext({ viewport: { width, height: 900 }, colorScheme, bypassCSP: true });
    try {
      const page = await context.newPage();
      await page.goto(`${server.url}/`);
      // Two tests: results, the live drawing, the chart, and a history with its trend.
      for (let run = 0; run < 2; run++) {
        await page.waitForSelector('#speed-start:not([disabled])');
        await page.selectOption('#speed-mode', 'light');
        await page.click('#speed-start');
        await expect.poll(() => page.textContent('#speed-status'), { timeout: 60_000, interval: 250 }).toBe('Done.');
      }
      await page.waitForSelector('#history-chart-figure:not([hidden])');
      await addAxe(page);
      const violations = await axeViolations(page);
      expect(violations).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
