// The page's server choice in Debian's chromium: three real servers on loopback, the page's own
// (A) listing two others in NETDIAG_SERVERS, "near" (B, reached directly) and "far" (C, behind a
// relay that adds 20 ms each way: test/support/delay-relay.ts), and one named by an IPv6 literal,
// which the page's policy cannot name. "Nearest" must find B by its round trips, the test must run
// against B (its requests counted at B, none at A's targets), with the page's policy intact: no
// request refused, no violation in the console. Its export, history and share link name B. A
// deployment with no list shows no choice.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeResult } from '../../src/common/speedtest/share.js';
import { startCoturn, type Coturn } from '../support/coturn.js';
import { startDelayRelay, type DelayRelay } from '../support/delay-relay.js';
import { LOOPBACK_TRANSFERS, startTestServer, type TestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';
import { freePort } from '../support/wait.js';
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
      // The timing reads its own Resource Timing entries and clears none: the page's other
      // requests' entries, which their own readers take by name (web/latency/regions.ts), are still there.
      expect(await page.evaluate((url) => performance.getEntriesByName(url, 'resource').length, `${own.url}/v1/servers`)).toBe(1);

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

/** Counts a server's requests whose path (query left off) is `path`. */
function countPath(server: TestServer, path: string): () => number {
  let count = 0;
  server.running.server.on('request', (req: IncomingMessage) => {
    if ((req.url ?? '').split('?')[0] === path) count++;
  });
  return () => count;
}

/**
 * Counts a server's requests other than idle round trips (`/__down?bytes=0&during=idle…`, which
 * "Nearest" times): a test that starts asks its configuration (of a listed server), and the
 * speed-test library's round trip and transfers are of other forms.
 */
function countBeyondTiming(server: TestServer): () => number {
  let count = 0;
  server.running.server.on('request', (req: IncomingMessage) => {
    if (!(req.url ?? '').startsWith('/__down?bytes=0&during=idle&')) count++;
  });
  return () => count;
}

/** One way, ms: the slow server's five round trips outlast "Nearest"'s NEAREST_TIMEOUT_MS, so the timing takes all of it. */
const SLOW_ONE_WAY_MS = 400;

// The page's own deployment (home) has no TURN server and lists "fra", which has one (Debian's
// coturn on loopback, test/support/coturn.ts), and "slow", behind a relay adding 400 ms each way.
// A test against fra asks fra for TURN credentials, not home; a cancel while "Nearest" is timed
// starts nothing afterwards; a server picked by name while "Nearest" is timed keeps its line when
// the timing ends; on the Arabic page the line under the form sets each name apart.
describe.skipIf(!ready || !requireCommands('a listed server\'s TURN server', ['turnserver'], 'coturn'))('a listed server\'s TURN server, a cancel while "Nearest" is timed, and names in Arabic', () => {
  const secret = randomBytes(32).toString('base64');
  let turn: Coturn;
  let fra: TestServer;
  let slow: TestServer;
  let home: TestServer;
  let relay: DelayRelay;
  let browser: Browser;

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    turn = await startCoturn(secret);
    // fra lists home (as the operator lists every deployment on each), so home's page may read fra's TURN credentials.
    const homePort = await freePort();
    const listedHome = { name: 'home', url: `http://127.0.0.1:${String(homePort)}`, location: 'Here' };
    fra = await startTestServer({ ...LOOPBACK_TRANSFERS, NETDIAG_EVENTS_SINK: 'none', NETDIAG_TURN_URL: turn.url, NETDIAG_TURN_SECRET: secret, NETDIAG_SERVERS: JSON.stringify([listedHome]) });
    slow = await startTestServer({ ...LOOPBACK_TRANSFERS, NETDIAG_EVENTS_SINK: 'none' });
    relay = await startDelayRelay({ host: '127.0.0.1', port: slow.port }, SLOW_ONE_WAY_MS);
    const servers = [
      { name: 'fra', url: fra.url, location: 'Frankfurt' },
      { name: 'slow', url: `http://127.0.0.1:${String(relay.port)}`, location: 'Far away' },
    ];
    home = await startTestServer({ ...LOOPBACK_TRANSFERS, PORT: String(homePort), NETDIAG_EVENTS_SINK: 'none', NETDIAG_SERVERS: JSON.stringify(servers) });
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'], timeout: 20_000 });
  }, 30_000);

  afterAll(async () => {
    // Each closed only if it was started: a set-up that failed part way must not leave coturn running.
    const started: ({ close(): Promise<unknown> } | undefined)[] = [browser, relay, home, fra, slow, turn];
    await Promise.all(started.map((s) => s?.close() ?? Promise.resolve()));
  });

  /** Waits for "Nearest"'s timing to end (its line names what it found). */
  const nearestFound = (page: Page) => page.waitForFunction(() => document.querySelector('#speed-server-note')?.textContent.startsWith('Nearest:') === true, undefined, { timeout: 10_000 });

  it('asks the listed server measured, not its own deployment, for TURN credentials', async () => {
    const turnAtFra = countPath(fra, '/v1/speed-test/turn-credentials');
    const turnAtHome = countPath(home, '/v1/speed-test/turn-credentials');
    const { page, context } = await openWatched(browser, `${home.url}/?lang=en`);
    try {
      await page.waitForSelector('#speed-server-pair:not([hidden])');
      await page.selectOption('#speed-server', 'fra');
      await page.selectOption('#speed-mode', 'light');
      await page.click('#speed-start');
      await page.waitForSelector('#speed-start:not([disabled])', { timeout: 60_000 });
      expect(await page.textContent('#speed-status'), (await page.textContent('#speed-error')) ?? '').toBe('Done.');
      expect(turnAtFra()).toBe(1);
      expect(turnAtHome()).toBe(0);
      // That route answers its own origin and the listed ones only (docs/api.md, "CORS"): fra lists
      // home, so the loss is measured through fra's coturn.
      const loss = `${String(await page.textContent('#speed-results [data-metric="loss"] .value'))}: ${String(await page.textContent('#speed-results [data-metric="loss"] .detail'))}`;
      expect(loss).toMatch(/^[0-9.]+%: [0-9,]+ of [0-9,]+ datagrams through /);
    } finally {
      await context.close();
    }
  }, 90_000);

  it('starts no test after a cancel while "Nearest" is timed', async () => {
    const { page, context } = await openWatched(browser, `${home.url}/?lang=en`);
    try {
      await nearestFound(page);
      const asked = { fra: countBeyondTiming(fra), home: countBeyondTiming(home), slow: countBeyondTiming(slow) };
      await page.selectOption('#speed-mode', 'light');
      await page.click('#speed-start');
      await page.waitForFunction(() => document.querySelector('#speed-server-note')?.textContent === 'Finding the nearest server…');
      await page.click('#speed-cancel');
      expect(await page.textContent('#speed-status')).toBe('The test was cancelled.');
      expect(await page.isEnabled('#speed-start')).toBe(true);
      expect(await page.isHidden('#speed-cancel')).toBe(true);
      // The timing runs to its end (the slow server's timeout), and then nothing more is asked of anyone.
      await nearestFound(page);
      await page.waitForTimeout(1000);
      expect([asked.fra(), asked.home(), asked.slow()]).toEqual([0, 0, 0]);
      expect(await page.textContent('#speed-status')).toBe('The test was cancelled.');
    } finally {
      await context.close();
    }
  }, 30_000);

  it('keeps the line of a server picked by name while the page-load timing of "Nearest" is still under way', async () => {
    const { page, context } = await openWatched(browser, `${home.url}/?lang=en`);
    try {
      // The timing ends when the slow server's round trips are cut off at NEAREST_TIMEOUT_MS.
      const slowCutOff = page.waitForEvent('requestfailed', { predicate: (request) => request.url().startsWith(`http://127.0.0.1:${String(relay.port)}/__down`), timeout: 10_000 });
      await page.waitForSelector('#speed-server-pair:not([hidden])');
      expect(await page.textContent('#speed-server-note')).toBe('Finding the nearest server…');
      await page.selectOption('#speed-server', 'slow');
      expect(await page.textContent('#speed-server-note')).toBe('Measuring against slow, Far away.');
      await slowCutOff;
      // A task after the cut-off: the timing's own continuations (microtasks) have all run by then.
      await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 0)));
      expect(await page.textContent('#speed-server-note')).toBe('Measuring against slow, Far away.');
      expect(await page.getAttribute('#speed-server-note', 'data-server')).toBe('slow');
      // Back to "Nearest", the line says it is timing, and then what it found.
      await page.selectOption('#speed-server', '');
      expect(await page.textContent('#speed-server-note')).toBe('Finding the nearest server…');
      await nearestFound(page);
      expect(await page.getAttribute('#speed-server-note', 'data-server')).toBe('fra');
    } finally {
      await context.close();
    }
  }, 30_000);

  it('sets each server\'s name and place apart in Arabic, so each reads as a unit', async () => {
    const { page, context } = await openWatched(browser, `${home.url}/?lang=ar`);
    try {
      await page.waitForFunction(() => document.querySelector<HTMLElement>('#speed-server-note')?.dataset.server === 'fra', undefined, { timeout: 10_000 });
      expect(await page.getAttribute('html', 'dir')).toBe('rtl');
      expect(await page.$$eval('#speed-server-note bdi', (parts) => parts.map((p) => p.textContent))).toEqual(['fra', 'Frankfurt']);
      await page.locator('#speed-form').screenshot({ path: `${ARTIFACTS}servers-nearest-ar-form.png` });
      await page.locator('#speed-server-note').screenshot({ path: `${ARTIFACTS}servers-nearest-ar.png` });
      await page.selectOption('#speed-server', 'fra');
      expect(await page.$$eval('#speed-server-note bdi', (parts) => parts.map((p) => p.textContent))).toEqual(['fra', 'Frankfurt']);
    } finally {
      await context.close();
    }
  });
});
