// A browser page that records what it asks for: every request it makes, and every request its
// Content-Security-Policy refused (a refused request never reaches the network, so it is no
// `request` event), for the suites that hold the page to "nothing but these origins".
import type { Browser, BrowserContext, Page } from 'playwright-core';

export interface WatchedPage {
  page: Page;
  context: BrowserContext;
  /** Every URL requested so far. */
  requested: string[];
  /** The URLs the page's policy refused so far. */
  refused: () => Promise<string[]>;
}

export async function openWatched(browser: Browser, url: string, width = 1280, height = 900): Promise<WatchedPage> {
  const context = await browser.newContext({ viewport: { width, height } });
  const page = await context.newPage();
  await page.addInitScript(() => {
    const seen: string[] = [];
    (window as unknown as { refused: string[] }).refused = seen;
    document.addEventListener('securitypolicyviolation', (event) => seen.push(event.blockedURI));
  });
  const requested: string[] = [];
  page.on('request', (request) => requested.push(request.url()));
  await page.goto(url);
  return { page, context, requested, refused: () => page.evaluate(() => (window as unknown as { refused: string[] }).refused) };
}
