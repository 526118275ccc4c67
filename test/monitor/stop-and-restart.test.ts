// `netdiag monitor` stopped with an alert not yet delivered (docs/monitor.md, "Stopping"): its webhook's port
// is closed, so the alert waits for its retry (5 s, then 30 s and 2 min). SIGTERM (or SIGINT)
// ends the monitor within 10 s whatever is pending, the alert is kept in the history's outbox,
// and the next start, with a real receiver listening on that port, delivers it once. And a start
// whose page cannot listen (the address in use) names the setting and the file that chose it.
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { runLinesOf, startMonitor, until, type MonitorProcess } from '../support/monitor-process.js';
import { freePort } from '../support/wait.js';
import { startWebhookReceiver } from '../support/webhook-receiver.js';

/** The bound docs/monitor.md ("Stopping": within seconds) holds a stop to, whatever is pending (systemd's own default is 90 s). */
const STOP_BOUND_MS = 10_000;

const dir = mkdtempSync(join(tmpdir(), 'netdiag-monitor-stop-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** How long `monitor` takes to exit after `signal`, or a failure naming the bound once it is well past it. */
async function stopTimed(monitor: MonitorProcess, signal: NodeJS.Signals): Promise<{ ms: number; code: number | null }> {
  const started = performance.now();
  monitor.child.kill(signal);
  const timer = setTimeout(() => monitor.child.kill('SIGKILL'), STOP_BOUND_MS * 2);
  const [code] = (await once(monitor.child, 'exit')) as [number | null];
  clearTimeout(timer);
  return { ms: performance.now() - started, code };
}

const outbox = (database: string): number => {
  const db = new DatabaseSync(database, { readOnly: true });
  const { n } = db.prepare('SELECT count(*) AS n FROM outbox').get() as { n: number };
  db.close();
  return n;
};

describe('netdiag monitor started where its page cannot listen', () => {
  it('a listen address in use is said with the setting and the file that chose it, and the monitor exits 1', async () => {
    const taken = createServer();
    taken.listen(0, '127.0.0.1');
    await once(taken, 'listening');
    const port = (taken.address() as { port: number }).port;
    const config = join(dir, 'in-use.yaml');
    writeFileSync(config, `servers: [http://127.0.0.1:9]\ndatabase: ${join(dir, 'in-use.db')}\nlisten: 127.0.0.1:${String(port)}\nchecks:\n  - name: x\n    run: rpm\n    every: 1h\n`);
    const monitor = startMonitor(config);
    try {
      const [code] = (await once(monitor.child, 'exit')) as [number | null];
      expect(code).toBe(1);
    } finally {
      taken.close();
    }
    expect(monitor.lines).toContain(`netdiag monitor: listen: 127.0.0.1:${String(port)} is in use (the \`listen:\` setting in ${config})`);
  });
});

describe('netdiag monitor stopped with an alert pending', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)('%s: exits within 10 s, keeps the alert, and the next start delivers it once', async (signal) => {
    const hookPort = await freePort();
    const database = join(dir, `${signal}.db`);
    const config = join(dir, `${signal}.yaml`);
    // Nothing listens on the server's port: each run fails at once, and the first alerts.
    writeFileSync(config, `servers: [http://127.0.0.1:${String(await freePort())}]\ndatabase: ${database}\nlisten: off\nchecks:\n  - name: down\n    run: rpm\n    cron: "* * * * * *"\n    spread: 0s\n    alert_after: 1\nnotify: ["http://127.0.0.1:${String(hookPort)}/hook"]\n`);
    const first = startMonitor(config);
    try {
      await until('the alert refused and its retry waited for', () => first.lines.some((l) => l.startsWith('netdiag monitor: the alert for down on ') && l.endsWith('trying again in 5 s')), 20_000, first.lines);
    } catch (err) {
      first.child.kill('SIGKILL');
      throw err;
    }
    const stopped = await stopTimed(first, signal);
    expect(stopped.code).toBe(0);
    expect(stopped.ms).toBeLessThan(STOP_BOUND_MS);
    expect(first.lines.some((l) => l.startsWith('netdiag monitor: the alert for down on ') && l.endsWith(`is kept for http://127.0.0.1:${String(hookPort)}/…, to be sent after the next start`))).toBe(true);
    expect(outbox(database)).toBe(1);

    // The webhook's port the first monitor could not reach, now listening.
    const hook = await startWebhookReceiver(hookPort);
    const received = hook.notices;
    const second = startMonitor(config);
    try {
      await until('the kept alert', () => received.length >= 1, 20_000, second.lines);
      // Runs go on failing while the alert is out: nothing more is sent for them.
      const runsAtDelivery = runLinesOf(second.lines, 'down').length;
      await until('three more runs', () => runLinesOf(second.lines, 'down').length >= runsAtDelivery + 3, 20_000, second.lines);
    } finally {
      second.child.kill('SIGTERM');
      await once(second.child, 'exit');
      hook.close();
    }
    expect(received).toEqual([expect.objectContaining({ kind: 'alert', check: 'down', title: expect.stringMatching(/: 1 breach$/) as unknown })]);
    expect(outbox(database)).toBe(0);
  }, 90_000);
});
