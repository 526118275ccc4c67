// The monitor's local page (docs/monitor.md, "The local page") in Debian's chromium, served by a running `netdiag monitor`
// with runs of its own against a real server and a page history imported: a card per check with
// its state (a speed test meeting its expectations, a families check whose alert is out), the
// page's trend chart of the speed tests, every run read in the table newest first; no axe
// violation at desktop and phone width, light and dark; in Arabic the page runs right to left with
// each figure isolated. Each run says what it measured against and from where: an `auto` run the
// server it chose ("auto → URL"), a check with a `source:` its address, in /history.json and on
// the page. A request naming the monitor by another name is refused (DNS rebinding).
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { historyFileJson } from '../../src/common/speedtest/history-file.js';
import { openStore } from '../../src/cli/monitor/store.js';
import { addAxe, axeViolations } from '../support/axe.js';
import { runLinesOf, startMonitor, until, type MonitorProcess } from '../support/monitor-process.js';
import { runCli } from '../support/process.js';
import { LOOPBACK_TRANSFERS, startTestServer, type TestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';
import { freePort } from '../support/wait.js';

const ready = requireCommands("the monitor's page in chromium", ['chromium'], 'chromium');

/** A page's history of the four days before today (within the page's 30): a chart needs two results at least. */
const imported = [4, 3, 2, 1].map((daysAgo) => ({ at: Math.floor((Date.now() - daysAgo * 86_400_000) / 1000) * 1000, mode: 'full' as const, downloadBps: (84 - daysAgo) * 1e6, uploadBps: 20e6, latencyMs: 12, loadedDownMs: 44 - daysAgo, loadedUpMs: 50 }));

/** The servers the stored `auto` runs chose (never asked: the page only shows them). */
const NEAR = 'http://near.example:8080';
const FAR = 'http://far.example:8080';

/** GET `path` of the monitor with `host` as its Host header; the status. */
function statusWithHost(port: number, path: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { Host: host } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

describe.skipIf(!ready)("the monitor's local page", () => {
  let dir: string;
  let server: TestServer;
  let monitor: MonitorProcess;
  let browser: Browser;
  let url: string;
  let port: number;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'netdiag-monitor-page-'));
    server = await startTestServer({ NETDIAG_EVENTS_SINK: 'none', NETDIAG_RATE_LIMITS: 'speedtest=100000,ip=100000', ...LOOPBACK_TRANSFERS });
    port = await freePort();
    url = `http://127.0.0.1:${String(port)}/`;
    const config = join(dir, 'monitor.yaml');
    writeFileSync(
      config,
      `servers: [${server.url}]\ndatabase: ${join(dir, 'monitor.db')}\nlisten: 127.0.0.1:${String(port)}\nhosts: [monitor.example.lan]\nchecks:\n` +
        `  - name: line speed\n    run: speedtest\n    mode: light\n    source: 127.0.0.1\n    cron: "*/2 * * * * *"\n    spread: 0s\n    expect: { download_mbps: ">= 0.001" }\n` +
        // The test server has no IPv6 origin: IPv6 is "unchecked", a breach, and the alert goes out at once.
        `  - name: both families\n    run: families\n    cron: "* * * * * *"\n    spread: 0s\n    expect: { ipv6: "= ok" }\n    alert_after: 1\n`,
    );
    const file = join(dir, 'page.json');
    writeFileSync(file, historyFileJson(imported));
    // Import reads the whole configuration, whose checks run each second (docs/monitor.md, "Schedules").
    expect((await runCli(['monitor', 'import', file, '--config', config, '--check', 'line speed', '--server', server.url], { NETDIAG_MONITOR_MIN_INTERVAL: '1s' })).code).toBe(0);
    // A run the server's rate limit refused an hour ago (the monitor records one when the command
    // exits 4, test/monitor/limits-and-reload.test.ts): the page says so, and not as a failure.
    const store = await openStore(join(dir, 'monitor.db'));
    store.addRun({ check: 'line speed', server: server.url, startedAt: Date.now() - 3_600_000, durationMs: 40, ok: false, limited: true, error: 'Too many requests (not waited: it asks to wait 3600 s; try again then)', figures: {}, breaches: [] });
    // Two runs of an `auto` entry (test/monitor/auto-server.test.ts has the monitor choose and record them), each naming the server it chose then.
    for (const [hoursAgo, chosen, rtt] of [[3, FAR, 80], [2, NEAR, 5]] as const) store.addRun({ check: 'round trip', server: 'auto', startedAt: Date.now() - hoursAgo * 3_600_000, durationMs: 40, ok: true, error: null, figures: { client_to_api_rtt_ms: rtt }, breaches: [], chosen, sourceAddress: '127.0.0.1' });
    store.close();
    monitor = startMonitor(config);
    await until('two speed tests and a families check', () => runLinesOf(monitor.lines, 'line speed').length >= 2 && runLinesOf(monitor.lines, 'both families').length >= 1, 60_000, monitor.lines);
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'], timeout: 20_000 });
  }, 90_000);

  afterAll(async () => {
    await browser.close();
    monitor.child.kill('SIGTERM');
    await once(monitor.child, 'exit');
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("shows each check's state, the speed tests' trend and every run read, newest first", async () => {
    const page = await browser.newPage();
    try {
      // The history the page read, as it read it.
      const answered = page.waitForResponse((res) => res.url().endsWith('/history.json'));
      await page.goto(url);
      const read = ((await (await answered).json()) as { runs: { check: string; server: string; source: string; chosen: string | null; source_address: string | null }[] }).runs;
      // Each run with what it measured against and from: the auto runs' choices, the speed tests' source.
      expect(read.filter((r) => r.server === 'auto').map((r) => [r.chosen, r.source_address])).toEqual([
        [FAR, '127.0.0.1'],
        [NEAR, '127.0.0.1'],
      ]);
      const speedTests = read.filter((r) => r.check === 'line speed' && r.source === 'monitor');
      // The first is the limited run stored above, without a source; the monitor's own runs were sent from the check's.
      expect(speedTests.length).toBeGreaterThanOrEqual(3);
      expect(speedTests.map((r) => [r.chosen, r.source_address])).toEqual([[null, null], ...speedTests.slice(1).map(() => [null, '127.0.0.1'])]);
      expect(read.filter((r) => r.check === 'both families').every((r) => r.chosen === null && r.source_address === null)).toBe(true);
      await page.waitForSelector('#monitor-runs-section:not([hidden])');
      const cards = await page.$$eval('#monitor-checks li', (items) => items.map((li) => ({ name: li.querySelector('h3')?.textContent, state: li.dataset.state, text: li.querySelector('.state')?.textContent, server: li.querySelector('code')?.textContent, source: li.querySelector('.source')?.textContent ?? null })));
      expect(cards.map((c) => [c.name, c.state, c.server, c.source])).toEqual([
        ['line speed', 'ok', server.url, 'from 127.0.0.1'],
        ['both families', 'alerting', server.url, null],
        // The auto entry's card names the server its last run chose.
        ['round trip', 'ok', `auto → ${NEAR}`, 'from 127.0.0.1'],
      ]);
      expect(cards[0]?.text).toBe('Meeting every expectation');
      expect(cards[1]?.text).toMatch(/^Alert sent: \d+ breaches in a row$/);
      // The page's own trend chart, over the imported results and the monitor's own.
      // Its caption names the check and the server, then a key for each line it draws.
      expect(await page.$eval('#monitor-charts figcaption', (c) => c.firstChild?.textContent)).toBe(`line speed on ${server.url}`);
      expect(await page.$$eval('#monitor-charts figcaption .key', (keys) => keys.map((k) => k.textContent))).toEqual(['download', 'upload', 'latency under load (the worse direction)']);
      expect(await page.$$eval('#monitor-charts svg polyline.trend', (lines) => lines.length)).toBeGreaterThanOrEqual(3);
      // Every run the page read, newest first, the imported four marked so.
      const rows = await page.$$eval('#monitor-runs tbody tr', (trs) => (trs as HTMLTableRowElement[]).map((tr) => ({ result: tr.cells[3]?.textContent ?? '', ok: tr.dataset.ok })));
      expect(rows).toHaveLength(read.length);
      // The server column, shown, says what each run measured against and, on a line of its own, from where.
      const where = await page.$$eval('#monitor-runs tbody tr', (trs) => (trs as HTMLTableRowElement[]).map((tr) => {
        const td = tr.querySelector<HTMLElement>('td[data-column="server"]');
        return { check: tr.cells[1]?.textContent, server: td?.querySelector('.server')?.textContent, source: td?.querySelector('.source')?.textContent ?? null, shown: td?.checkVisibility() };
      }));
      expect(where.filter((w) => w.check === 'round trip')).toEqual([
        { check: 'round trip', server: `auto → ${NEAR}`, source: 'from 127.0.0.1', shown: true },
        { check: 'round trip', server: `auto → ${FAR}`, source: 'from 127.0.0.1', shown: true },
      ]);
      const speedRows = where.filter((w) => w.check === 'line speed');
      expect(speedRows.every((w) => w.server === server.url && w.shown === true)).toBe(true);
      expect(speedRows.filter((w) => w.source === 'from 127.0.0.1')).toHaveLength(speedTests.length - 1);
      expect(where.filter((w) => w.check === 'both families').every((w) => w.server === server.url && w.source === null)).toBe(true);
      expect(rows.filter((r) => r.result.endsWith('(imported from the page)'))).toHaveLength(4);
      const limited = await page.$$eval('#monitor-runs tbody td.limited', (tds) => tds.map((td) => td.textContent));
      expect(limited).toEqual(["refused by the server's rate limit, counted in no streak: Too many requests (not waited: it asks to wait 3600 s; try again then)"]);
      // Each figure by the page's name for it, in its unit, never a JSON key ("download_mbps 80").
      expect(rows.at(-1)?.result).toMatch(/^Download 80\u00a0Mbps, Upload 20\u00a0Mbps, Idle latency 12\u00a0ms/);
      expect(rows.some((r) => r.ok === 'true' && /^Download [0-9.,]+\u00a0Mbps/.test(r.result) && !r.result.includes('imported'))).toBe(true);
    } finally {
      await page.close();
    }
  });

  it.each([
    [1280, 'light'],
    [390, 'dark'],
  ] as const)('at %s px in %s: no axe violation', async (width, colorScheme) => {
    const context = await browser.newContext({ viewport: { width, height: 900 }, colorScheme, bypassCSP: true });
    try {
      const page = await context.newPage();
      await page.goto(url);
      await page.waitForSelector('#monitor-charts svg polyline');
      await addAxe(page);
      expect(await axeViolations(page)).toEqual([]);
    } finally {
      await context.close();
    }
  }, 60_000);

  it('in Arabic: right to left, its words translated, each figure named in Arabic and isolated as one left-to-right unit', async () => {
    const page = await browser.newPage();
    try {
      await page.goto(`${url}?lang=ar`);
      await page.waitForSelector('#monitor-runs-section:not([hidden])');
      expect(await page.evaluate(() => [document.documentElement.lang, document.documentElement.dir])).toEqual(['ar', 'rtl']);
      expect(await page.textContent('#now-h')).toBe('الآن');
      const last = (await page.$$eval('#monitor-checks li .figures', (ps) => ps.map((p) => p.textContent))).find((text) => text.includes('Mbps')) ?? '';
      // FSI … PDI around "التنزيل 12.3 Mbps" (UAX #9), and the figure within it isolated left to
      // right: otherwise the number and its unit swap sides.
      expect(last).toMatch(/^\u2068التنزيل \u2068{3}[0-9.,]+\u2069\u00a0Mbps\u2069{2}/);
    } finally {
      await page.close();
    }
  });

  it('refuses a request that names the monitor by a name it was not given, so a web page cannot read the history through DNS rebinding', async () => {
    expect(await statusWithHost(port, '/history.json', 'attacker.example')).toBe(403);
    expect(await statusWithHost(port, '/history.json', `attacker.example:${String(port)}`)).toBe(403);
    expect(await statusWithHost(port, '/history.json', `localhost:${String(port)}`)).toBe(200);
    expect(await statusWithHost(port, '/metrics', `127.0.0.1:${String(port)}`)).toBe(200);
    // A name the configuration gives (hosts), for a scrape or a bookmark by name.
    expect(await statusWithHost(port, '/metrics', `monitor.example.lan:${String(port)}`)).toBe(200);
    expect(await statusWithHost(port, '/metrics', `other.example.lan:${String(port)}`)).toBe(403);
  });
});
