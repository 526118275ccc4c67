// `netdiag monitor pause` and `resume` (docs/monitor.md, "Pausing") against the built monitor in a
// child process: the command reads the configuration, finds the listener and the token the monitor
// keeps beside its history, and pauses it; the pause is kept in the history, so a monitor
// restarted while paused stays paused. Its check fails every run (its server's port is closed)
// and alerts after one breach: while paused each slot is recorded as skipped with the pause's end,
// the history holds no streak and the webhook receiver gets nothing; after `resume` the next run
// breaches and the alert comes, listing that run alone. A POST with no token, or another one,
// pauses nothing. A second monitor on the same configuration, refused the port, leaves the running
// one's token in place.
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runLinesOf, startMonitor, until, type MonitorProcess } from '../support/monitor-process.js';
import { runCli } from '../support/process.js';
import { freePort } from '../support/wait.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const ENV = { NETDIAG_MONITOR_MIN_INTERVAL: '1s' };

describe('netdiag monitor pause and resume', () => {
  let dir: string;
  let receiver: WebhookReceiver;
  let config: string;
  let database: string;
  let listenPort: number;
  let server: string;

  /** The configuration: one check against a closed port, each second (`cron`) or once a year. */
  const write = (cron: string) => {
    writeFileSync(config, `servers: [${server}]\ndatabase: ${database}\nlisten: 127.0.0.1:${String(listenPort)}\nchecks:\n  - name: round trip\n    run: latency\n    cron: "${cron}"\n    spread: 0s\n    alert_after: 1\nnotify: [${receiver.url}]\n`);
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'netdiag-monitor-pause-'));
    receiver = await startWebhookReceiver();
    listenPort = await freePort();
    server = `http://127.0.0.1:${String(await freePort())}`;
    config = join(dir, 'monitor.yaml');
    database = join(dir, 'history', 'monitor.db');
  });
  afterAll(() => {
    receiver.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function stop(monitor: MonitorProcess): Promise<void> {
    if (monitor.child.exitCode !== null) return;
    monitor.child.kill('SIGTERM');
    await once(monitor.child, 'exit');
  }

  /** A control POST to the listener with `headers`; the status. */
  const post = async (path: string, headers: Record<string, string>) => (await fetch(`http://127.0.0.1:${String(listenPort)}${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: '{"for":"10m"}' })).status;
  /** The check's streak and alerting as the history holds them (/history.json). */
  const checkState = async () => ((await (await fetch(`http://127.0.0.1:${String(listenPort)}/history.json`)).json()) as { checks: { streak: number; alerting: boolean }[] }).checks[0];
  const latest = async () => (await (await fetch(`http://127.0.0.1:${String(listenPort)}/latest.json`)).json()) as { paused: boolean; paused_until: string | null };

  it('pause 10m survives a restart: slots skipped, no alert; a POST without the token refused; resume: the next run breaches and alerts', async () => {
    // Once a year: nothing runs while the pause is set.
    write('0 0 1 1 *');
    let pausedTill = '';
    let resumedAt = 0;
    const first = startMonitor(config, ENV);
    try {
      await until('the listener', () => first.lines.some((l) => l.includes('page on http://')), 10_000, first.lines);
      // Made at start beside the history, readable by the user alone.
      expect(statSync(`${database}.control-token`).mode & 0o777).toBe(0o600);
      expect(await post('/control/pause', {})).toBe(403);
      expect(await post('/control/pause', { Authorization: 'Bearer not-the-token' })).toBe(403);
      expect((await latest()).paused).toBe(false);
      const before = Date.now();
      const paused = await runCli(['monitor', 'pause', '10m', '--config', config], ENV);
      expect(paused.code, paused.stderr).toBe(0);
      const until10m = /^paused until (\S+) \(netdiag monitor resume ends it\)$/m.exec(paused.stdout)?.[1] ?? '';
      expect(Date.parse(until10m) - before).toBeGreaterThanOrEqual(600_000 - 1_000);
      expect(Date.parse(until10m) - Date.now()).toBeLessThanOrEqual(601_000);
      expect(await latest()).toMatchObject({ paused: true, paused_until: until10m });
      pausedTill = until10m;
    } finally {
      await stop(first);
    }

    // Each second now, breaching at every run were it run; started anew, the pause held in the history.
    write('* * * * * *');
    const second = startMonitor(config, ENV);
    const lines = () => runLinesOf(second.lines, 'round trip');
    try {
      await until('three paused slots', () => lines().length >= 3, 10_000, second.lines);
      expect(lines().slice(0, 3)).toEqual(Array.from({ length: 3 }, () => `netdiag monitor: round trip on ${server}: skipped: paused until ${pausedTill} (netdiag monitor resume ends it); counted in no streak`));
      // The history, not the webhook's timing: a judged breach would have set the streak, and its
      // alert set alerting in the same transaction that queued the notice.
      const during = await checkState();
      expect(during).toMatchObject({ streak: 0, alerting: false });
      expect(receiver.notices).toEqual([]);
      resumedAt = Date.now();
      const resumed = await runCli(['monitor', 'resume', '--config', config], ENV);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stdout).toBe('not paused: the checks run at their next slots\n');
      expect((await latest()).paused).toBe(false);
      await until('the alert after the first run', () => receiver.notices.length >= 1, 10_000, second.lines);
    } finally {
      await stop(second);
    }
    // The monitor gone, so is its token: the command says no monitor runs.
    const after = await runCli(['monitor', 'resume', '--config', config], ENV);
    expect(after.code).toBe(1);
    expect(after.stderr).toContain('no monitor is running on the history');

    const history = await runCli(['monitor', 'history', '--json', '--config', config], ENV);
    const runs = JSON.parse(history.stdout) as { outcome: string; error: string | null; started_at: string }[];
    const skipped = runs.filter((r) => r.outcome === 'skipped');
    const failed = runs.filter((r) => r.outcome === 'failed');
    expect(skipped.length).toBeGreaterThanOrEqual(3);
    expect(skipped.every((r) => /^paused until \S+Z \(netdiag monitor resume ends it\)$/.test(r.error ?? ''))).toBe(true);
    // Skipped first, then run (and failed): no run after the resume was skipped.
    expect(runs.findIndex((r) => r.outcome === 'failed')).toBe(skipped.length);
    expect(failed.every((r) => Date.parse(r.started_at) >= resumedAt)).toBe(true);
    expect(receiver.notices.map((n) => [n.kind, n.check])).toEqual([['alert', 'round trip']]);
    // The alert counts one breach and lists the first run after the resume (to the second, as the
    // notice says it), none of the paused slots before it.
    const [alert] = receiver.notices;
    expect(alert?.title).toBe(`netdiag monitor: round trip on ${server}: 1 breach`);
    const listed = (alert?.body ?? '').split('\n').map((line) => /^- (\S+Z): /.exec(line)?.[1]);
    expect(listed).toEqual([`${(failed[0]?.started_at ?? '').slice(0, 19)}Z`]);
  }, 20_000);

  it('a second monitor on the same configuration exits 1 on the address in use and leaves the first its token: pause still works', async () => {
    write('0 0 1 1 *');
    const first = startMonitor(config, ENV);
    try {
      await until('the listener', () => first.lines.some((l) => l.includes('page on http://')), 10_000, first.lines);
      const token = readFileSync(`${database}.control-token`, 'utf8');
      const second = startMonitor(config, ENV);
      const [code] = (await once(second.child, 'exit')) as [number | null];
      expect(code, second.lines.join('\n')).toBe(1);
      expect(second.lines.some((l) => l.includes(`listen: 127.0.0.1:${String(listenPort)} is in use`))).toBe(true);
      expect(readFileSync(`${database}.control-token`, 'utf8')).toBe(token);
      const paused = await runCli(['monitor', 'pause', '10m', '--config', config], ENV);
      expect(paused.code, paused.stderr).toBe(0);
      expect((await latest()).paused).toBe(true);
      const resumed = await runCli(['monitor', 'resume', '--config', config], ENV);
      expect(resumed.code, resumed.stderr).toBe(0);
    } finally {
      await stop(first);
    }
  }, 15_000);
});
