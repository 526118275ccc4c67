// The page's server choice in Debian's chromium: three real servers on loopback, the page's own
// (A) listing two others in NETDIAG_SERVERS, "near" (B, reached directly) and "far" (C, behind a
// relay that adds 20 ms each way: test/support/delay-relay.ts), and one named by an IPv6 literal,
// which the page's policy cannot name. "Nearest" must find B by its round trips, the test must run
// against B (its requests counted at B, none at A's targets), with the page's policy intact: no
// request refused, no violation in the console. Its export, history and share link name B. A
// deployment with no list shows no choice.
import { mkdirSync, readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeResult } from '../../src/common/speedtest/share.js';
import { startDelayRelay, type DelayRelay } from '../support/delay-relay.js';
import { LOOPBACK_TRANSFERS, startTestServer, type TestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';
import { openWatched } from '../support/watched-page.js';

const ARTIFACTS = fileURLToPath(new URL('../../test-results/', import.meta.url));
const ready = requireCommands('page in chromium', ['chromium'], 'chromium');

/** One way, ms: C's round trip is at least 40 ms more than B's (the relay holds every chunk each way). */
const FAR_ONE_WAY_MS = 20;

/** Counts the speed-test target requests (`/__down`, `/__up`) a server receives. */
function countTargets(server: TestServer): () => number {
  let count = 0;
  server.running.server.on('request', (req: IncomingMessage) => {
    if (/^\/__(down|up)\b/.test(req.url ?? '')) count++;
  });
  return () => count;
}

describe.skipIf(!ready)('the server choice, in Chromium', () => {
  let own: TestServer;
  let near: TestServer;
  let far: TestServer;
  let relay: DelayRelay;
  let browser: Browser;
  let atOwn: () => number;
  let atNear: () => number;
  let atFar: () => number;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    near = await startTestServer({ ...LOOPBACK_TRANSFERS, NETDIAG_EVENTS_SINK: 'none' });
    far = await startTestServer({ ...LOOPBACK_TRANSFERS, NETDIAG_EVENTS_SINK: 'none' });
    relay = await startDelayRelay({ host: '127.0.0.1', port: far.port }, FAR_ONE_WAY_MS);
    const servers = [
      { name: 'far', url: `http://127.0.0.1:${String(relay.port)}`, location: 'Relay C, 40 ms away' },
      { name: 'near', url: near.url, location: 'Loopback B' },
      { name: 'v6', url: 'http://[::1]:9', location: 'IPv6 literal' },
    ];
    own = await startTestServer({ ...LOOPBACK_TRANSFERS, NETDIAG_EVENTS_SINK: 'none', NETDIAG_SERVERS: JSON.stringify(servers) });
    atOwn = countTargets(own);
    atNear = countTargets(near);
    atFar = countTargets(far);
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'], timeout: 20_000 });
  }, 30_000);

  afterAll(async () => {
    await browser.close();
    await relay.close();
    await Promise.all([own.close(), near.close(), far.close()]);
  });

  it('lists the servers, finds the nearest by round trip, and measures against it with the policy intact', async () => {
    const { page, context, refused } = await openWatched(browser, `${own.url}/?lang=en`);
    const violations: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
    });
    try {
      await page.waitForSelector('#speed-server-pair:not([hidden])');
      expect(await page.$$eval('#speed-server option', (options) => options.map((o) => o.textContent))).toEqual(['Nearest', 'far, Relay C, 40 ms away', 'near, Loopback B']);
      expect(await page.inputValue('#speed-server')).toBe('');
      expect(await page.textContent('#speed-server-skipped')).toMatch(/^Not offered: v6 \(http:\/\/\[::1\]:9\)\. A server named by an IPv6 address cannot be allowed/);
      // "Nearest" is timed as the page opens, and names what it found with its round trip.
      await page.waitForFunction(() => document.querySelector<HTMLElement>('#speed-server-note')?.dataset.server !== undefined, undefined, { timeout: 10_000 });
      expect(await page.textContent('#speed-server-note')).toMatch(/^Nearest: near, Loopback B — [0-9.,]+\sms$/);
      expect(Number(await page.getAttribute('#speed-server-note', 'data-ms'))).toBeLessThan(2 * FAR_ONE_WAY_MS);
      // Each server was asked its round trips: the far one too.
      expect(atFar()).toBeGreaterThan(0);

      const before = { own: atOwn(), near: atNear(), far: atFar() };
      await page.selectOption('#speed-mode', 'light');
      await page.click('#speed-start');
      await page.waitForSelector('#speed-start:not([disabled])', { timeout: 60_000 });
      expect(await page.textContent('#speed-status'), (await page.textContent('#speed-error')) ?? '').toBe('Done.');
      expect(await page.getAttribute('#speed-server-note', 'data-server')).toBe('near');
      // The whole test went to B: its transfers and round trips by the hundred, none to A's targets,
      // and to C only "Nearest"'s few round trips as the test started.
      expect(atNear() - before.near).toBeGreaterThan(50);
      expect(atOwn() - before.own).toBe(0);
      expect(atFar() - before.far).toBeLessThanOrEqual(5);
      expect(await refused()).toEqual([]);
      expect(violations).toEqual([]);
      await page.screenshot({ path: `${ARTIFACTS}servers-desktop.png` });

      // The export, the history and a share link name the server the result was measured against.
      const [json] = await Promise.all([page.waitForEvent('download'), page.click('#speed-export-json')]);
      const exported = JSON.parse(readFileSync(await json.path(), 'utf8')) as { server: unknown; origin: string; streams: number };
      expect(exported).toMatchObject({ server: { name: 'near', url: near.url, location: 'Loopback B' }, origin: near.url, streams: 4 });
      expect(await page.textContent('#history-table tbody tr:first-child td:nth-child(2)')).toBe('light, server near, 4 streams');
      const [historyFile] = await Promise.all([page.waitForEvent('download'), page.click('#history-export-csv')]);
      // No family column: no result of it was held to one.
      expect(readFileSync(await historyFile.path(), 'utf8').split('\n').slice(0, 2).map((line) => line.split(',').slice(-2).join(','))).toEqual(['server,streams', 'near,4']);
      await page.click('#speed-share');
      const link = (await page.textContent('#speed-share-link')) ?? '';
      expect(decodeResult(new URL(link).hash.slice(3))).toMatchObject({ ok: true, result: { server: 'near', streams: 4 } });
      // Opened, the link says what the result was measured against.
      const shared = await context.newPage();
      await shared.goto(link);
      await shared.waitForSelector('#shared-setup:not([hidden])');
      expect(await shared.textContent('#shared-setup')).toBe('How it was measured: server near, 4 streams.');

      // A server chosen by name is said as such.
      await page.selectOption('#speed-server', 'far');
      expect(await page.textContent('#speed-server-note')).toBe('Measuring against far, Relay C, 40 ms away.');
    } finally {
      await context.close();
    }
  }, 90_000);

  it('fits the choices and the lines under them in a phone\'s width', async () => {
    const { page, context } = await openWatched(browser, `${own.url}/?lang=en`, 390, 800);
    try {
      await page.waitForFunction(() => document.querySelector<HTMLElement>('#speed-server-note')?.dataset.server !== undefined, undefined, { timeout: 10_000 });
      await page.screenshot({ path: `${ARTIFACTS}servers-phone.png` });
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      const form = await page.$$eval('#speed-form > *', (items) => items.filter((i) => !(i as HTMLElement).hidden).map((i) => i.getBoundingClientRect().right));
      expect(Math.max(...form)).toBeLessThanOrEqual(390);
    } finally {
      await context.close();
    }
  });

  it('shows no choice on a deployment that lists no servers, and measures itself', async () => {
    const { page, context } = await openWatched(browser, `${near.url}/?lang=en`);
    try {
      await page.waitForSelector('#speed-start:not([disabled])');
      expect(await page.isHidden('#speed-server-pair')).toBe(true);
      expect(await page.isHidden('#speed-server-note')).toBe(true);
      expect(await page.isHidden('#speed-server-skipped')).toBe(true);
    } finally {
      await context.close();
    }
  });
});
