// The data budget end to end (docs/monitor.md, "A data budget"): `netdiag monitor` as a child
// process runs one light speed test against a real server on loopback under the whole monitor's
// budget of 100 GB and a check's own too large to matter, which records the bytes B it moved each
// way. A SIGHUP then gives the check a budget of about 1.15 B, smaller than two tests, and a run
// each second: the first run used 87% of it (the log warns once at 80%), and the next is skipped
// because the estimate (the last run's B) is more than what is left, recorded so with its reason
// in `history --json`; /metrics and the page (Debian's chromium) show what is left of each budget.
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

/** Three seconds of each minute, 20 s apart, the first a few seconds from now: one run before the SIGHUP, whenever the monitor is up. */
function everyTwentySeconds(): string {
  const first = (new Date().getSeconds() + 4) % 60;
  return [0, 20, 40].map((k) => (first + k) % 60).sort((a, b) => a - b).join(',') + ' * * * * *';
}

/** Bytes as docs/monitor.md shows them for a budget written in decimal units: the largest of GB, MB that fits, to a tenth. */
const shown = (bytes: number): string => (bytes >= 1e9 ? `${(bytes / 1e9).toFixed(1)} GB` : `${(bytes / 1e6).toFixed(1)} MB`);

describe.skipIf(!ready)('a data budget smaller than two speed tests', () => {
  let dir: string;
  let server: TestServer;
  let monitor: MonitorProcess;
  let config: string;
  let base: string;
  /** The bytes the first run moved, both ways, and the check's budget the SIGHUP set from them. */
  let moved: number;
  let budgetBytes: number;
  let budgetText: string;

  /** The configuration with the check's schedule and its own budget. */
  function writeConfig(port: number, cron: string, budget: string): void {
    writeFileSync(
      config,
      `servers: [${server.url}]\ndatabase: ${join(dir, 'monitor.db')}\nlisten: 127.0.0.1:${String(port)}\nbudget: 100 GB per 30 days\nchecks:\n` +
        `  - name: line speed\n    run: speedtest\n    mode: light\n    cron: "${cron}"\n    spread: 0s\n    budget: ${budget}\n`,
    );
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'netdiag-budget-'));
    server = await startTestServer({ NETDIAG_EVENTS_SINK: 'none', NETDIAG_RATE_LIMITS: 'speedtest=100000', ...LOOPBACK_TRANSFERS });
    const port = await freePort();
    base = `http://127.0.0.1:${String(port)}`;
    config = join(dir, 'monitor.yaml');
    writeConfig(port, everyTwentySeconds(), '10 TB per 30 days');
    monitor = startMonitor(config);
    await until('the first speed test', () => runLinesOf(monitor.lines, 'line speed').length >= 1, 40_000, monitor.lines);
    const [first] = await history();
    expect(first?.outcome, 'the first run').toBe('ok');
    moved = (first?.bytes_down ?? 0) + (first?.bytes_up ?? 0);
    // A budget the first run used 80 to 100% of (it warns, nothing is skipped for want of bytes
    // left), and less than two runs: what is left is less than the estimate, the last run's bytes.
    budgetBytes = Math.round((moved * 1.15) / 1e6) * 1e6;
    budgetText = `${String(budgetBytes / 1e6)} MB per 30 days`;
    writeConfig(port, '* * * * * *', budgetText);
    monitor.child.kill('SIGHUP');
    // Two skipped slots: the warning is said once, not at each.
    await until('two skipped slots', () => runLinesOf(monitor.lines, 'line speed').filter((l) => l.includes(': skipped: ')).length >= 2, 20_000, monitor.lines);
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

  it('records the bytes the first run moved, then skips the next as its estimate would pass what is left, and warns once', async () => {
    const runs = await history();
    const [first, second] = runs;
    expect(first?.outcome).toBe('ok');
    expect(first?.bytes_down).toBeGreaterThan(0);
    expect(first?.bytes_up).toBeGreaterThan(0);
    // The budget fits the first run but not a second: 80 to 100% used, less than two runs.
    expect(moved / budgetBytes).toBeGreaterThanOrEqual(0.8);
    expect(moved).toBeLessThan(budgetBytes);
    expect(second).toMatchObject({ outcome: 'skipped', bytes_down: null, bytes_up: null });
    expect(second?.error).toBe(`this check's budget ${budgetText} has ${shown(budgetBytes - moved)} left; this check's last run moved ${shown(moved)}`);
    // Only the first run ran: every later slot was skipped the same way.
    expect(runs.slice(1).every((r) => r.outcome === 'skipped' && r.error === second?.error)).toBe(true);
    const warnings = monitor.lines.filter((l) => l.includes(`line speed's data budget ${budgetText} is `));
    expect(warnings).toHaveLength(1);
    const percent = String(Math.floor((moved / budgetBytes) * 100));
    expect(warnings[0]).toBe(
      `netdiag monitor: line speed's data budget ${budgetText} is ${percent}% used: ${shown(moved)} moved in the window, ${shown(budgetBytes - moved)} left; a run that would pass it is skipped`,
    );
  });

  it('/metrics and the page show what is left of each budget', async () => {
    const metrics = await (await fetch(`${base}/metrics`)).text();
    const gauge = (name: string, labels: string) => new RegExp(`^${name}\\{${labels}\\} (\\S+)$`, 'm').exec(metrics)?.[1];
    const whole = 'scope="monitor",check="",budget="100 GB per 30 days"';
    const own = `scope="check",check="line speed",budget="${budgetText}"`;
    expect(Number(gauge('netdiag_monitor_budget_limit_bytes', whole))).toBe(100e9);
    expect(Number(gauge('netdiag_monitor_budget_used_bytes', whole))).toBe(moved);
    expect(Number(gauge('netdiag_monitor_budget_remaining_bytes', whole))).toBe(100e9 - moved);
    expect(Number(gauge('netdiag_monitor_budget_limit_bytes', own))).toBe(budgetBytes);
    expect(Number(gauge('netdiag_monitor_budget_remaining_bytes', own))).toBe(budgetBytes - moved);
    expect(metrics).toMatch(/^netdiag_monitor_runs_total\{check="line speed",server="[^"]+",outcome="skipped"\} [1-9]/m);

    const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'], timeout: 20_000 });
    try {
      const page = await browser.newPage();
      await page.goto(`${base}/`);
      await page.waitForSelector('#monitor-budgets:not([hidden]) p');
      const lines = await page.$$eval('#monitor-budgets p', (ps) => ps.map((p) => p.textContent));
      expect(lines).toEqual([
        `Data budget 100 GB per 30 days: ${shown(100e9 - moved)} left, ${shown(moved)} used`,
        `line speed's data budget ${budgetText}: ${shown(budgetBytes - moved)} left, ${shown(moved)} used`,
      ]);
    } finally {
      await browser.close();
    }
  });
});
