// The page's family choice in Debian's chromium: one server listening on 127.0.0.1 and ::1,
// NETDIAG_IPV4_URL and NETDIAG_IPV6_URL naming it by a host name of each family (Chromium's
// --host-resolver-rules give each name its one address, as single-family DNS records would; a
// policy cannot name an IPv6 literal: test/page/dual-stack.test.ts). "Both" runs the test over
// IPv4, then over IPv6, each family's transfers seen at the server from that family's address,
// and shows each family's figures side by side; the history keeps both results, each naming its family.
import type { IncomingMessage } from 'node:http';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOOPBACK_TRANSFERS, startTestServer, type TestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';
import { freePort } from '../support/wait.js';
import { openWatched } from '../support/watched-page.js';

const ARTIFACTS = fileURLToPath(new URL('../../test-results/', import.meta.url));
const ready = requireCommands('page in chromium', ['chromium'], 'chromium');
const V4 = 'ipv4.netdiag.test';
const V6 = 'ipv6.netdiag.test';

/** The family a request came over, by the address the server saw it from. */
const familyOf = (req: IncomingMessage): 'ipv4' | 'ipv6' => (req.socket.remoteAddress === '::1' ? 'ipv6' : 'ipv4');

describe.skipIf(!ready)('the family choice, in Chromium', () => {
  let server: TestServer;
  let browser: Browser;
  /** Each transfer the server received (a download of bytes, an upload), with its family, in order. */
  const transfers: ('ipv4' | 'ipv6')[] = [];

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const port = await freePort();
    server = await startTestServer({ ...LOOPBACK_TRANSFERS, NETDIAG_EVENTS_SINK: 'none', PORT: String(port), HOST: '::', NETDIAG_IPV4_URL: `http://${V4}:${String(port)}`, NETDIAG_IPV6_URL: `http://${V6}:${String(port)}` });
    server.running.server.on('request', (req: IncomingMessage) => {
      const url = new URL(req.url ?? '/', 'http://server');
      if (url.pathname === '/__up' || (url.pathname === '/__down' && Number(url.searchParams.get('bytes')) > 0)) transfers.push(familyOf(req));
    });
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', `--host-resolver-rules=MAP ${V4} 127.0.0.1, MAP ${V6} [::1]`], timeout: 20_000 });
  }, 30_000);

  afterAll(async () => {
    await browser.close();
    await server.close();
  });

  it('offers Automatic, IPv4, IPv6 and Both; Both measures over each family in turn and shows them side by side', async () => {
    const { page, context, refused } = await openWatched(browser, `${server.url}/?lang=en`);
    const violations: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
    });
    try {
      await page.waitForSelector('#speed-family-pair:not([hidden])');
      expect(await page.$$eval('#speed-family option', (options) => options.map((o) => o.textContent))).toEqual(['Automatic', 'IPv4', 'IPv6', 'Both, one after the other']);
      expect(await page.inputValue('#speed-family')).toBe('');
      await page.selectOption('#speed-mode', 'light');
      await page.selectOption('#speed-family', 'both');
      const port = String(server.port);
      expect(await page.textContent('#speed-family-note')).toBe(`Measured against this server's own address for the family: IPv4 http://${V4}:${port} and IPv6 http://${V6}:${port}.`);
      transfers.length = 0;
      await page.click('#speed-start');
      // Both runs end before the table shows; the first run's end gives Start back only for a moment.
      await page.waitForSelector('#speed-families:not([hidden])', { timeout: 90_000 });
      expect(await page.textContent('#speed-status'), (await page.textContent('#speed-error')) ?? '').toBe('Done.');

      // At the server: IPv4's transfers, then IPv6's, none interleaved.
      const firstV6 = transfers.indexOf('ipv6');
      expect(firstV6).toBeGreaterThan(10);
      expect(transfers.slice(0, firstV6).every((f) => f === 'ipv4')).toBe(true);
      expect(transfers.slice(firstV6).every((f) => f === 'ipv6')).toBe(true);
      expect(transfers.length - firstV6).toBeGreaterThan(10);

      // Each family's column: its figures, the headline's being IPv6's, measured last.
      expect(await page.$$eval('#speed-families-table thead th', (cells) => cells.map((c) => c.textContent))).toEqual(['Figure', 'IPv4', 'IPv6']);
      for (const family of ['ipv4', 'ipv6']) {
        for (const figure of ['download', 'upload']) expect(await page.textContent(`#speed-families-table td[data-family="${family}"][data-figure="${figure}"]`)).toMatch(/^[0-9.,]+\sMbps$/);
        expect(await page.textContent(`#speed-families-table td[data-family="${family}"][data-figure="latency"]`)).toMatch(/^[0-9.,]+\sms$/);
      }
      expect(await page.getAttribute('#speed-families-table td[data-family="ipv6"][data-figure="download"]', 'data-value')).toBe(await page.getAttribute('#speed-results dd[data-metric="download"]', 'data-value'));

      // The history keeps both, each naming its family.
      expect(await page.$$eval('#history-table tbody tr td:nth-child(2)', (cells) => cells.map((c) => c.textContent))).toEqual(['light, 4 streams, IPv6', 'light, 4 streams, IPv4']);
      expect(await refused()).toEqual([]);
      expect(violations).toEqual([]);
      await page.screenshot({ path: `${ARTIFACTS}families-desktop.png`, fullPage: false });
      await page.setViewportSize({ width: 390, height: 900 });
      await page.locator('#speed-families').scrollIntoViewIfNeeded();
      await page.screenshot({ path: `${ARTIFACTS}families-phone.png`, fullPage: false });
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    } finally {
      await context.close();
    }
  }, 150_000);
});
