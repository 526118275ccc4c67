// The page's dual-stack check in Debian's chromium: one server listening on 127.0.0.1 and ::1,
// the page opened at one origin, NETDIAG_IPV4_URL and NETDIAG_IPV6_URL naming the server by each
// family. Then the IPv6 origin pointed at an address in a namespace that swallows packets (a
// broken family), and at a closed port (a missing one). Screenshots go to test-results/.
//
// The family origins are host names, as in a deployment (ipv4.example.net with only an A record):
// a Content-Security-Policy cannot name an IPv6 literal such as [::1] (CSP3's host-source grammar
// has no brackets; Chromium reports such a source invalid and drops it). Chromium's own
// --host-resolver-rules give the names their one address each, as single-family DNS records would.
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAMILY_TIMEOUT_MS } from '../../src/common/families.js';
import { holdHostNetworkQuiet } from '../support/host-network-lock.js';
import { canMakeNetns, createBlackhole, type Blackhole } from '../support/netns.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';
import { freePort } from '../support/wait.js';
import { openWatched } from '../support/watched-page.js';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = fileURLToPath(new URL('../../test-results/', import.meta.url));
const ready = requireCommands('dual-stack page in chromium', ['chromium', 'ip'], 'chromium iproute2');
const namespaces = canMakeNetns();
if (!namespaces && process.env.CI === 'true') throw new Error('the dual-stack page suite needs root for its namespace; CI requires it');

/** A server on both families whose family origins are the given ones (`PORT` is the server's own). */
const V4 = 'ipv4.netdiag.test';
const V6 = 'ipv6.netdiag.test';
const BROKEN_V6 = 'broken6.netdiag.test';

async function serverWith(origins: (port: number) => { v4: string; v6: string }): Promise<TestServer> {
  const port = await freePort();
  const { v4, v6 } = origins(port);
  return startTestServer({ PORT: String(port), HOST: '::', NETDIAG_IPV4_URL: v4, NETDIAG_IPV6_URL: v6, NETDIAG_RATE_LIMITS: 'ip=1000' });
}

interface Shown {
  verdict: string | undefined;
  text: string;
  ipv4: string;
  ipv6: string;
  preferred: string;
}

async function shown(page: Page): Promise<Shown> {
  return page.evaluate(() => {
    const q = (s: string) => document.querySelector(s);
    return {
      verdict: (q('#families-verdict') as HTMLElement).dataset.verdict,
      text: q('#families-verdict')?.textContent ?? '',
      ipv4: q('#families [data-family="ipv4"]')?.textContent ?? '',
      ipv6: q('#families [data-family="ipv6"]')?.textContent ?? '',
      preferred: q('#families [data-field="preferred"]')?.textContent ?? '',
    };
  });
}

describe.skipIf(!ready)('the dual-stack check in headless Chromium', () => {
  let browser: Browser;
  let hole: Blackhole | undefined;
  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    hole = namespaces ? createBlackhole() : undefined;
    const rules = [`MAP ${V4} 127.0.0.1`, `MAP ${V6} [::1]`, ...(hole === undefined ? [] : [`MAP ${BROKEN_V6} [${hole.address}]`])];
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', `--host-resolver-rules=${rules.join(', ')}`], timeout: 20_000 });
  }, 30_000);
  afterAll(async () => {
    await browser.close();
    hole?.destroy();
  });

  /** Opens the page at `base` (recording what it asks for); resolves when the verdict is in. */
  async function open(base: string, width = 1280) {
    // Chromium fails its requests in flight when the host's interfaces change, as other suites'
    // namespaces come and go: held still while the page asks (test/support/host-network-lock.ts).
    const release = await holdHostNetworkQuiet();
    try {
      const started = Date.now();
      const { page, context, requested, refused } = await openWatched(browser, `${base}/`, width);
      // How each failed request failed, in Chromium's words, for a verdict that is not the one expected.
      const failures: string[] = [];
      page.on('requestfailed', (request) => failures.push(`${request.url()}: ${request.failure()?.errorText ?? ''} after ${String(Date.now() - started)} ms`));
      // The bound is the page's own deadline, with a wide margin for a loaded machine.
      await page.waitForFunction(() => (document.querySelector('#families-verdict') as HTMLElement).dataset.verdict !== undefined, undefined, { timeout: FAMILY_TIMEOUT_MS * 4 });
      return { page, context, requested, refused: await refused(), tookMs: Date.now() - started, failures };
    } finally {
      release();
    }
  }

  it('shows both addresses and the verdict "both", asking only the two family origins beside its own', async () => {
    const server = await serverWith((port) => ({ v4: `http://${V4}:${String(port)}`, v6: `http://${V6}:${String(port)}` }));
    try {
      const { page, context, requested, refused } = await open(server.url);
      const s = await shown(page);
      expect(s.verdict).toBe('both');
      expect(s.text).toBe('Both: IPv4 and IPv6 work.');
      expect(s.ipv4).toMatch(/^127\.0\.0\.1network unknown; answered in [0-9.,]+\s(ms|s)$/);
      expect(s.ipv6).toMatch(/^::1network unknown; answered in [0-9.,]+\s(ms|s)$/);
      expect(s.preferred).toBe('IPv4this page was opened by an IPv4 address, so the browser had no choice');
      expect(refused).toEqual([]);
      const origins = [...new Set(requested.map((url) => new URL(url).origin))].sort();
      const port = String(server.port);
      expect(origins).toEqual([`http://127.0.0.1:${port}`, `http://${V4}:${port}`, `http://${V6}:${port}`]);
      expect(requested.filter((url) => !url.startsWith(`http://127.0.0.1:${port}/`))).toEqual([`http://${V4}:${port}/v1/ip`, `http://${V6}:${port}/v1/ip`].sort());
      const policy = (await page.request.get(`${server.url}/`, { headers: { Accept: 'text/html' } })).headers()['content-security-policy'];
      expect(/connect-src ([^;]+);/.exec(policy ?? '')?.[1]).toBe(`'self' http://${V4}:${port} http://${V6}:${port}`);
      await page.screenshot({ path: `${ARTIFACTS}dual-stack-both-desktop.png`, fullPage: false });
      await context.close();
      const phone = await open(server.url, 390);
      await phone.page.screenshot({ path: `${ARTIFACTS}dual-stack-both-phone.png`, fullPage: false });
      const width = await phone.page.evaluate(() => document.documentElement.scrollWidth);
      expect(width).toBeLessThanOrEqual(390);
      await phone.context.close();
    } finally {
      await server.close();
    }
  });

  describe.skipIf(!namespaces)('with a broken IPv6', () => {
    it('names IPv6 as broken after the page\'s deadline, never waiting on it longer', async () => {
      const server = await serverWith((port) => ({ v4: `http://${V4}:${String(port)}`, v6: `http://${BROKEN_V6}:${String(port)}` }));
      try {
        const { page, context, tookMs, failures } = await open(server.url);
        const s = await shown(page);
        expect(s.verdict, failures.join('; ')).toBe('ipv6-broken');
        expect(s.text).toMatch(/^IPv6 is broken: it did not answer in [0-9.,]+\ss\. IPv4 works, but sites that offer IPv6 may load slowly/);
        expect(s.ipv6).toMatch(/^no answernothing in [0-9.,]+\ss: broken$/);
        expect(s.ipv4).toMatch(/^127\.0\.0\.1/);
        // It waited for the deadline (a broken family is not a fast failure), and not much past it.
        expect(tookMs).toBeGreaterThanOrEqual(FAMILY_TIMEOUT_MS);
        await page.screenshot({ path: `${ARTIFACTS}dual-stack-broken-desktop.png`, fullPage: false });
        await context.close();
      } finally {
        await server.close();
      }
    }, FAMILY_TIMEOUT_MS * 6);
  });

  it('a family that fails at once is missing, not broken: "IPv4 only"', async () => {
    const closed = await freePort();
    const server = await serverWith((port) => ({ v4: `http://${V4}:${String(port)}`, v6: `http://${V6}:${String(closed)}` }));
    try {
      const { page, context, tookMs } = await open(server.url);
      const s = await shown(page);
      expect(s.verdict).toBe('ipv4-only');
      expect(s.text).toMatch(/^IPv4 only: there is no IPv6 on this connection \(it failed at once, in [0-9,]+\sms, so nothing waits for it\)\.$/);
      expect(tookMs).toBeLessThan(FAMILY_TIMEOUT_MS * 4);
      await context.close();
    } finally {
      await server.close();
    }
  });

  it('with the origins given as addresses, the page opened at the IPv6 one asks both and says "both"', async () => {
    // NETDIAG_IPV6_URL=http://[::1]:PORT cannot be named in a policy, but opened there it is 'self'.
    const server = await serverWith((port) => ({ v4: `http://127.0.0.1:${String(port)}`, v6: `http://[::1]:${String(port)}` }));
    try {
      const { page, context, requested, refused } = await open(`http://[::1]:${String(server.port)}`);
      const s = await shown(page);
      expect(s.verdict).toBe('both');
      expect(s.ipv4).toMatch(/^127\.0\.0\.1network unknown; answered in/);
      expect(s.ipv6).toMatch(/^::1network unknown; answered in/);
      expect(s.preferred).toBe('IPv6this page was opened by an IPv6 address, so the browser had no choice');
      expect(refused).toEqual([]);
      expect(requested.filter((url) => url.startsWith('http://127.0.0.1:'))).toEqual([`http://127.0.0.1:${String(server.port)}/v1/ip`]);
      await context.close();
    } finally {
      await server.close();
    }
  });

  it('an IPv6 origin given as an address is left unasked from another origin, and the page says why, with no policy error', async () => {
    const server = await serverWith((port) => ({ v4: `http://127.0.0.1:${String(port)}`, v6: `http://[::1]:${String(port)}` }));
    try {
      const { page, context, requested, refused } = await open(server.url);
      const s = await shown(page);
      expect(s.verdict).toBe('partial');
      expect(s.ipv6).toMatch(/^not checkedthis server names its IPv6 origin by an address, which a page's security policy cannot allow from another origin \(open the page at that address, or run netdiag ip --both\)$/);
      expect(s.ipv4).toMatch(/^127\.0\.0\.1/);
      expect(refused).toEqual([]);
      expect(requested.some((url) => url.startsWith('http://[::1]'))).toBe(false);
      await context.close();
    } finally {
      await server.close();
    }
  });

  it('with no family origin set, says what it could tell and how the operator turns the full check on, asking nothing more', async () => {
    const server = await startTestServer({ PORT: String(await freePort()), NETDIAG_RATE_LIMITS: 'ip=1000' });
    try {
      const { page, context, requested } = await open(server.url);
      const s = await shown(page);
      expect(s.verdict).toBe('unset');
      expect(s.text).toBe("IPv4 works: this page came over it. Whether this connection also has the other family is not checked here: this server's operator has not given it an IPv4-only and an IPv6-only address (NETDIAG_IPV4_URL, NETDIAG_IPV6_URL). From a computer, netdiag ip --both checks both.");
      // Said plainly, not as an alarm: the line is not bold.
      expect(await page.$eval('#families-verdict', (e) => getComputedStyle(e).fontWeight)).toBe('400');
      expect(requested.every((url) => url.startsWith(server.url))).toBe(true);
      await context.close();
    } finally {
      await server.close();
    }
  });
});
