// The data budget end to end (docs/monitor.md, "A data budget"): `netdiag monitor` as a child
// process runs light speed tests each second against a real server on loopback under a budget of
// its own smaller than two of them (1 GB: a light test there moves several) and the whole
// monitor's of 100 GB. The first run goes (nothing to go by yet) and records the bytes it moved
// each way; the next is skipped, recorded so with its reason in `history --json`; the log warns
// once at 80%; /metrics and the page (Debian's chromium) show what is left of each budget.
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runLinesOf, startMonitor, until, type MonitorProcess } from '../support/monitor-process.js';
import { runCli } from '../support/process.js';
import { LOOPBACK_TRANSFERS, startTestServer, type TestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';
import { freePort } from '../support/wait.js';

const ready = requireCommands('the data budget on the page in chromium', ['chromium'], 'chromium');

interface HistoryRun {
  outcome: string;
  error: string | null;
  bytes_down: number | null;
  bytes_up: number | null;
}

describe.skipIf(!ready)('a data budget smaller than two speed tests', () => {
  let dir: string;
  let server: TestServer;
  let monitor: MonitorProcess;
  let config: string;
  let base: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'netdiag-budget-'));
    server = await startTestServer({ NETDIAG_EVENTS_SINK: 'none', NETDIAG_RATE_LIMITS: 'speedtest=100000', ...LOOPBACK_TRANSFERS });
    const port = await freePort();
    base = `http://127.0.0.1:${String(port)}`;
    config = join(dir, 'monitor.yaml');
    writeFileSync(
      config,
      `servers: [${server.url}]\ndatabase: ${join(dir, 'monitor.db')}\nlisten: 127.0.0.1:${String(port)}\nbudget: 100 GB per 30 days\nchecks:\n` +
        '  - name: line speed\n    run: speedtest\n    mode: light\n    cron: "* * * * * *"\n    spread: 0s\n    budget: 1 GB per 30 days\n',
    );
    monitor = startMonitor(config);
    // One run, then two slots skipped: the warning is said once, not at each.
    await until('a speed test and two skipped slots', () => runLinesOf(monitor.lines, 'line speed').filter((l) => l.includes(': skipped: ')).length >= 2, 40_000, monitor.lines);
  }, 60_000);

  afterAll(async () => {
    monitor.child.kill('SIGTERM');
    await once(monitor.child, 'exit');
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The runs `netdiag monitor history --json` lists, in order. */
  async function history(): Promise<HistoryRun[]> {
    const listed = await runCli(['monitor', 'history', '--json', '--config', config], { NETDIAG_MONITOR_MIN_INTERVAL: '1s' });
    expect(listed.code, listed.stderr).toBe(0);
    return JSON.parse(listed.stdout) as HistoryRun[];
  }

  it('records the bytes the first run moved, then skips the next with the reason, and warns once', async () => {
    const runs = await history();
    const [first, second] = runs;
    expect(first?.outcome).toBe('ok');
    // A light test on loopback moves far more than the 1 GB budget, both ways.
    expect(first?.bytes_down).toBeGreaterThan(1e9);
    expect(first?.bytes_up).toBeGreaterThan(0);
    expect(second).toMatchObject({ outcome: 'skipped', bytes_down: null, bytes_up: null });
    expect(second?.error).toBe("this check's budget 1 GB per 30 days has 0 B left; it runs again once older runs leave the window");
    // Only the first run ran: every later slot was skipped the same way.
    expect(runs.slice(1).every((r) => r.outcome === 'skipped' && r.error === second?.error)).toBe(true);
    const warnings = monitor.lines.filter((l) => l.includes("line speed's data budget 1 GB per 30 days is "));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^netdiag monitor: line speed's data budget 1 GB per 30 days is \d+% used: [\d.]+ GB moved in the window, 0 B left; a run that would pass it is skipped$/);
  });

  it('/metrics and the page show what is left of each budget', async () => {
    const [first] = await history();
    const used = (first?.bytes_down ?? 0) + (first?.bytes_up ?? 0);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    const gauge = (name: string, labels: string) => new RegExp(`^${name}\\{${labels}\\} (\\S+)$`, 'm').exec(metrics)?.[1];
    const whole = 'scope="monitor",check="",budget="100 GB per 30 days"';
    const own = 'scope="check",check="line speed",budget="1 GB per 30 days"';
    expect(Number(gauge('netdiag_monitor_budget_limit_bytes', whole))).toBe(100e9);
    expect(Number(gauge('netdiag_monitor_budget_used_bytes', whole))).toBe(used);
    expect(Number(gauge('netdiag_monitor_budget_remaining_bytes', whole))).toBe(100e9 - used);
    expect(Number(gauge('netdiag_monitor_budget_limit_bytes', own))).toBe(1e9);
    expect(Number(gauge('netdiag_monitor_budget_remaining_bytes', own))).toBe(0);
    expect(metrics).toMatch(/^netdiag_monitor_runs_total\{check="line speed",server="[^"]+",outcome="skipped"\} [1-9]/m);

    const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'], timeout: 20_000 });
    try {
      const page = await browser.newPage();
      await page.goto(`${base}/`);
      await page.waitForSelector('#monitor-budgets:not([hidden]) p');
      const lines = await page.$$eval('#monitor-budgets p', (ps) => ps.map((p) => p.textContent));
      const gb = (bytes: number) => `${(bytes / 1e9).toFixed(1)} GB`;
      expect(lines).toEqual([`Data budget 100 GB per 30 days: ${gb(100e9 - used)} left, ${gb(used)} used`, `line speed's data budget 1 GB per 30 days: 0 B left, ${gb(used)} used`]);
    } finally {
      await browser.close();
    }
  });
});
