// Over HTTP/2 Chromium carries every fetch to one origin on one connection, so the page's "multi"
// is four HTTP streams on one TCP connection, not four connections (docs/page.md, "Streams"). The
// real server serves HTTPS (a self-signed certificate made with openssl, which Chromium is told to
// accept) and offers h2 and http/1.1 by ALPN; the page runs a light test in Chromium as it comes
// (HTTP/2) and in one started with --disable-http2 (HTTP/1.1). The server records each load
// request's HTTP version, so each case is the protocol it says; the result's rate lines say the
// streams shared one HTTP/2 connection in the first case only.
import { mkdirSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selfSignedCertificate } from '../support/doh-relay.js';
import { LOOPBACK_TRANSFERS, startTestServer, type TestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';

const ready = requireCommands('the page over HTTPS in chromium', ['chromium', 'openssl'], 'chromium, openssl');
const SHOTS = 'test-results';

/** The HTTP versions of the load requests (a download of bytes, an upload) the server received. */
function loadVersions(server: TestServer): { seen: Set<string> } {
  const versions = { seen: new Set<string>() };
  server.running.server.on('request', (req: IncomingMessage) => {
    const url = new URL(req.url ?? '/', 'https://server');
    if (url.pathname === '/__up' || (url.pathname === '/__down' && Number(url.searchParams.get('bytes')) > 0)) versions.seen.add(req.httpVersion);
  });
  return versions;
}

describe.skipIf(!ready)('the streams over one HTTP/2 connection, said in the result', () => {
  let server: TestServer;
  let versions: { seen: Set<string> };
  let browsers: Browser[] = [];

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    const cert = selfSignedCertificate();
    server = await startTestServer({ ...LOOPBACK_TRANSFERS, NETDIAG_EVENTS_SINK: 'none', NETDIAG_TLS_CERT: cert.certFile, NETDIAG_TLS_KEY: cert.keyFile });
    versions = loadVersions(server);
  }, 30_000);

  afterAll(async () => {
    await Promise.all(browsers.map((b) => b.close()));
    browsers = [];
    await server.close();
  });

  /** A light test with the default streams in a Chromium started with `args`; each rate's line under it. */
  async function rateLines(args: string[], shot: string): Promise<string[]> {
    const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', ...args], timeout: 20_000 });
    browsers.push(browser);
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ignoreHTTPSErrors: true });
    try {
      const page = await context.newPage();
      await page.goto(`https://127.0.0.1:${String(server.port)}/?lang=en`);
      await page.waitForSelector('#speed-start:not([disabled])');
      expect(await page.inputValue('#speed-streams')).toBe('multi');
      await page.selectOption('#speed-mode', 'light');
      versions.seen.clear();
      await page.click('#speed-start');
      await page.waitForSelector('#speed-start:not([disabled])', { timeout: 60_000 });
      expect(await page.textContent('#speed-status'), (await page.textContent('#speed-error')) ?? '').toBe('Done.');
      await page.locator('#speed-results').screenshot({ path: `${SHOTS}/shared-connection-${shot}.png` });
      return await Promise.all(['download', 'upload'].map(async (name) => (await page.textContent(`#speed-results [data-metric="${name}"] .detail`)) ?? ''));
    } finally {
      await context.close();
    }
  }

  it('over HTTP/2 each rate says its four streams shared one HTTP/2 connection', async () => {
    const lines = await rateLines([], 'h2');
    expect([...versions.seen]).toEqual(['2.0']);
    for (const line of lines) expect(line).toMatch(/^(burst: .+; sustained: )?4 streams(, steady for |; the rate did not settle).*; the streams shared one HTTP\/2 connection$/);
  }, 90_000);

  it('over HTTP/1.1 (four connections) no rate says so', async () => {
    const lines = await rateLines(['--disable-http2'], 'http1');
    expect([...versions.seen]).toEqual(['1.1']);
    for (const line of lines) {
      expect(line).toMatch(/^(burst: .+; sustained: )?4 streams(, steady for |; the rate did not settle)/);
      expect(line).not.toContain('connection');
    }
  }, 90_000);
});
