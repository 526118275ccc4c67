// The local page's pause control (docs/monitor.md, "Pausing") in Debian's chromium against a
// running `netdiag monitor`: the page pauses for the length chosen and resumes, its POSTs carrying
// the CSRF token its own origin read. A page of another origin (another port, another host name)
// that POSTs to the monitor (a text/plain form, a no-cors fetch: what a page can send another
// origin without asking, Fetch's "CORS-safelisted" requests) is refused and the monitor stays
// unpaused.
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMonitor, until, type MonitorProcess } from '../support/monitor-process.js';
import { requireCommands } from '../support/system.js';
import { freePort } from '../support/wait.js';

const ready = requireCommands("the monitor's pause control in chromium", ['chromium'], 'chromium');

interface PauseState {
  paused: boolean;
  paused_until: string | null;
}

/** The other origin's page: a text/plain form whose body reads as the JSON a pause takes, and a no-cors fetch of that JSON. */
const hostilePage = (target: string) => `<!doctype html><title>another site</title>
<form id="f" method="POST" action="${target}/control/pause" enctype="text/plain"><input name='{"for":"10m","x":"' value='"}'></form>
<script>
  fetch('${target}/control/pause', { method: 'POST', mode: 'no-cors', headers: { 'Content-Type': 'text/plain' }, body: '{"for":"10m"}' })
    .finally(() => document.getElementById('f').submit());
</script>`;

describe.skipIf(!ready)("the monitor page's pause control", () => {
  let dir: string;
  let monitor: MonitorProcess;
  let browser: Browser;
  let other: Server;
  let otherPort: number;
  let base: string;

  const state = async (): Promise<PauseState> => (await (await fetch(`${base}/latest.json`)).json()) as PauseState;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'netdiag-monitor-pause-page-'));
    const port = await freePort();
    base = `http://127.0.0.1:${String(port)}`;
    const config = join(dir, 'monitor.yaml');
    // Once a year: the control is what is tested, not runs.
    writeFileSync(config, `servers: [http://127.0.0.1:${String(await freePort())}]\ndatabase: ${join(dir, 'monitor.db')}\nlisten: 127.0.0.1:${String(port)}\nchecks:\n  - name: yearly\n    run: families\n    cron: "0 0 1 1 *"\n    spread: 0s\n`);
    monitor = startMonitor(config);
    other = createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(hostilePage(base));
    });
    other.listen(0, '127.0.0.1');
    await once(other, 'listening');
    otherPort = (other.address() as { port: number }).port;
    await until('the listener', () => monitor.lines.some((l) => l.includes('page on http://')), 10_000, monitor.lines);
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'], timeout: 15_000 });
  }, 20_000);

  afterAll(async () => {
    await browser.close();
    other.close();
    monitor.child.kill('SIGTERM');
    await once(monitor.child, 'exit');
    rmSync(dir, { recursive: true, force: true });
  });

  it('pauses for the length chosen and resumes', async () => {
    const page = await browser.newPage();
    try {
      await page.goto(`${base}/`);
      await page.waitForSelector('#pause-section:not([hidden])');
      expect(await page.textContent('#pause-state')).toBe('Running: each check runs at its slots.');
      expect(await page.$$eval('#pause-for option', (options) => options.map((o) => o.textContent))).toEqual(['30 minutes', '1 hour', '2 hours', '6 hours', '1 day']);
      await page.selectOption('#pause-for', '2h');
      const before = Date.now();
      await page.click('#pause-button');
      await page.waitForFunction(() => document.querySelector('#pause-state')?.textContent.startsWith('Paused until') === true);
      const paused = await state();
      expect(paused.paused).toBe(true);
      const length = Date.parse(paused.paused_until ?? '') - before;
      expect(length).toBeGreaterThanOrEqual(2 * 3_600_000 - 1_000);
      expect(length).toBeLessThanOrEqual(2 * 3_600_000 + 5_000);
      expect(monitor.lines.some((l) => l.includes('paused by the local page until'))).toBe(true);
      await page.click('#resume-button');
      await page.waitForFunction(() => document.querySelector('#pause-state')?.textContent === 'Running: each check runs at its slots.');
      expect(await state()).toMatchObject({ paused: false, paused_until: null });
      expect(await page.textContent('#pause-error')).toBe('');
    } finally {
      await page.close();
    }
  });

  it("refuses another origin's form and no-cors POSTs: the monitor stays unpaused", async () => {
    const page = await browser.newPage();
    const statuses: number[] = [];
    page.on('response', (res) => {
      if (res.url().endsWith('/control/pause')) statuses.push(res.status());
    });
    try {
      // Another origin by host name and port alike.
      await page.goto(`http://localhost:${String(otherPort)}/`);
      // The form's POST navigates to the monitor's answer.
      await page.waitForURL(`${base}/control/pause`);
      await until('both POSTs answered', () => statuses.length >= 2, 5_000);
      expect(statuses).toEqual([403, 403]);
      expect(await page.textContent('body')).toContain("a control request must come from the monitor's own page");
    } finally {
      await page.close();
    }
    expect(await state()).toMatchObject({ paused: false, paused_until: null });
    expect(monitor.lines.filter((l) => l.includes('paused by'))).toHaveLength(1);
  });
});
