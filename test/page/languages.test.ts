// The page in each of its languages, in Debian's chromium: after two speed tests (figures, verdict,
// live drawing, chart, a history with its trend), at 1280 and 390 px, light and dark, every fixed
// text is its language's message, no placeholder is left unfilled, nothing overflows sideways,
// Arabic is laid out right to left, and axe-core (WCAG 2.x A and AA) finds no violation. The
// language comes from the browser's own list, from `?lang=`, or from the selector (kept across a
// reload). Screenshots of each language go to test-results/i18n/.
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, type ExpectStatic } from 'vitest';
import { LANGUAGES, type Language } from '../../web/i18n/languages.js';
import { catalogue } from '../support/catalogues.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { addAxe, axeViolations } from '../support/axe.js';
import { requireCommands } from '../support/system.js';

const SHOTS = fileURLToPath(new URL('../../test-results/i18n/', import.meta.url));
const ready = requireCommands('page languages in chromium', ['chromium'], 'chromium');


describe.skipIf(!ready)('the page in each language', () => {
  let server: TestServer;
  let browser: Browser;

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    server = await startTestServer({ NETDIAG_RATE_LIMITS: 'speedtest=100000' });
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'], timeout: 20_000 });
  }, 30_000);

  afterAll(async () => {
    await browser.close();
    await server.close();
  });

  /** One light test, to its end in the page's language; `expect` is the test's own. */
  async function lightTest(page: Page, language: Language, expect: ExpectStatic): Promise<void> {
    await page.waitForSelector('#speed-start:not([disabled])');
    await page.selectOption('#speed-mode', 'light');
    await page.click('#speed-start');
    await expect.poll(() => page.textContent('#speed-status'), { timeout: 60_000, interval: 250 }).toBe(catalogue(language.code)['speed.done']);
  }

  /** Each fixed text that is not its message in `language`: `key: shown`. */
  const misread = (page: Page, language: Language) =>
    page.$$eval(
      '[data-i18n]',
      (elements, messages) => elements.filter((e) => e.textContent !== messages[(e as HTMLElement).dataset.i18n as string]).map((e) => `${(e as HTMLElement).dataset.i18n ?? ''}: ${e.textContent}`),
      catalogue(language.code) as Record<string, string>,
    );

  // The five at once, each in its own context: what is checked is text and layout, not a rate, and
  // a light test lasts its five seconds a direction however it shares the machine (one language
  // after another took 124 s of a CI run).
  it.concurrent.for(LANGUAGES)('$code: every text its own, no overflow, no axe violation, at 1280 and 390 px, light and dark', { timeout: 180_000 }, async (language, { expect }) => {
    const { code } = language;
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP: true });
    try {
      const page = await context.newPage();
      await page.goto(`${server.url}/?lang=${code}`);
      await lightTest(page, language, expect);
      await lightTest(page, language, expect);
      await page.waitForSelector('#history-chart-figure:not([hidden])');
      expect(await page.evaluate(() => ({ lang: document.documentElement.lang, dir: document.documentElement.dir, title: document.title }))).toEqual({
        lang: code,
        dir: code === 'ar' ? 'rtl' : 'ltr',
        title: catalogue(code)['page.title'],
      });
      expect(await misread(page, language)).toEqual([]);
      // Every message the page wrote had its placeholders filled.
      expect(await page.evaluate(() => /\{[a-z][a-zA-Z0-9]*\}/.exec(document.body.innerText)?.[0] ?? null)).toBeNull();
      // The figures and the verdict are in the language's own words.
      expect(await page.textContent('#speed-results [data-metric="loaded"] .value')).not.toBe('–');
      await addAxe(page);
      for (const width of [1280, 390]) {
        await page.setViewportSize({ width, height: 900 });
        for (const colorScheme of ['light', 'dark'] as const) {
          await page.emulateMedia({ colorScheme });
          const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
          expect(overflow, `${code} at ${String(width)} px: wider than the window by ${String(overflow)} px`).toBeLessThanOrEqual(0);
          const violations = await axeViolations(page);
          expect(violations, `${code} at ${String(width)} px, ${colorScheme}`).toEqual([]);
        }
        await page.emulateMedia({ colorScheme: 'light' });
        await page.screenshot({ path: `${SHOTS}${code}-${String(width)}.png`, fullPage: true });
      }
    } finally {
      await context.close();
    }
  });

  it('carries English in its script and fetches only the language the reader reads', async () => {
    const script = await (await fetch(`${server.url}/app.js`)).text();
    expect(script).toContain(catalogue('en')['speed.heading']);
    for (const code of ['de', 'es', 'ja', 'ar']) {
      expect(script, code).not.toContain(catalogue(code)['history.where']);
      expect(await (await fetch(`${server.url}/i18n/${code}.json`)).json()).toEqual(catalogue(code));
    }
    const context = await browser.newContext({ locale: 'es-ES' });
    try {
      const page = await context.newPage();
      const asked: string[] = [];
      page.on('request', (request) => {
        if (request.url().includes('/i18n/')) asked.push(new URL(request.url()).pathname);
      });
      await page.goto(`${server.url}/`);
      await expect.poll(() => page.evaluate(() => document.documentElement.lang)).toBe('es');
      expect(asked).toEqual(['/i18n/es.json']);
    } finally {
      await context.close();
    }
  });

  it('without its catalogue, reads in English and says why', async () => {
    const context = await browser.newContext({ locale: 'ja-JP' });
    try {
      const page = await context.newPage();
      await page.route('**/i18n/ja.json', (route) => route.fulfill({ status: 503, body: '' }));
      await page.goto(`${server.url}/`);
      await page.waitForSelector('#speed-start:not([disabled])');
      expect(await page.evaluate(() => document.documentElement.lang)).toBe('en');
      expect(await page.textContent('#speed-h')).toBe(catalogue('en')['speed.heading']);
      expect(await page.textContent('#language-error')).toBe("The page's 日本語 texts could not be loaded (the server answered 503); it is shown in English.");
    } finally {
      await context.close();
    }
  });

  it('keeps Start disabled until the page can run a test (a click before its handler would submit the form and reload the page)', async () => {
    const context = await browser.newContext({ locale: 'de-DE' });
    try {
      const page = await context.newPage();
      let release = (): void => undefined;
      const released = new Promise<void>((resolve) => (release = resolve));
      await page.route('**/v1/speed-test/configuration', async (route) => {
        await released;
        await route.continue();
      });
      await page.goto(`${server.url}/`);
      // The language is set (its picker filled) and the sections started; the configuration is held.
      await page.waitForSelector('#language option[value="ja"]', { state: 'attached' });
      expect(await page.isDisabled('#speed-start')).toBe(true);
      release();
      await page.waitForSelector('#speed-start:not([disabled])');
    } finally {
      await context.close();
    }
  }, 60_000);

  it("follows the browser's own languages, and the reader's choice over them, kept across a reload", async () => {
    const context = await browser.newContext({ locale: 'de-AT' });
    try {
      const page = await context.newPage();
      await page.goto(`${server.url}/`);
      // The sections start once the language is set (its catalogue fetched): Start is enabled after.
      await page.waitForSelector('#speed-start:not([disabled])');
      // Why the page fell back to English, if it did: its own words (a catalogue that could not be fetched).
      const why = await page.evaluate(() => [navigator.languages.join(','), document.querySelector('#language-error')?.textContent ?? ''].join(' | '));
      expect(await page.evaluate(() => document.documentElement.lang), why).toBe('de');
      expect(await page.textContent('#speed-h')).toBe(catalogue('de')['speed.heading']);
      // The selector reloads the page in the language chosen, and the choice stays.
      await Promise.all([page.waitForEvent('load'), page.selectOption('#language', 'ja')]);
      await expect.poll(() => page.evaluate(() => document.documentElement.lang)).toBe('ja');
      expect(await page.textContent('#speed-h')).toBe(catalogue('ja')['speed.heading']);
      await page.reload();
      await page.waitForSelector('#speed-start:not([disabled])');
      expect(await page.evaluate(() => document.documentElement.lang)).toBe('ja');
      expect(await page.inputValue('#language')).toBe('ja');
    } finally {
      await context.close();
    }
  }, 60_000);
});
