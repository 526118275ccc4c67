// `netdiag monitor` as a user runs it (docs/monitor.md): the built command in a child process, its
// checks run by the netdiag command itself against a real server, its alerts through Debian's
// `apprise` command to a local receiver (Apprise's json:// posts each notice as JSON). A server
// that is down is a failed run, recorded with its reason and counted as a breach: after three in a
// row exactly one alert, and once the server is back one recovery notice, nothing in between;
// every run logged is a row of the history. Killed with SIGKILL in the middle of a test, the
// history passes SQLite's integrity check, keeps every run it committed, and the restarted
// monitor goes on at its pace with no burst of runs.
import { execFileSync, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { everySecondSpeedConfig, runLinesOf, startMonitor, until } from '../support/monitor-process.js';
import { LOOPBACK_TRANSFERS, startTestServer, type TestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';
import { freePort } from '../support/wait.js';

const ready = requireCommands('netdiag monitor', ['apprise'], 'apprise');
const promtoolReady = ready && requireCommands("netdiag monitor's metrics", ['promtool'], 'prometheus');

interface Received {
  title: string;
  message: string;
  /** Apprise's notification type. */
  type: string;
}

const runLines = (lines: readonly string[]) => runLinesOf(lines, 'line speed');

describe.skipIf(!ready)('netdiag monitor', () => {
  let dir: string;
  let receiver: Server;
  let receiverPort: number;
  const received: Received[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'netdiag-monitor-'));
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        received.push(JSON.parse(body) as Received);
        res.end('{}');
      });
    });
    receiver.listen(0, '127.0.0.1');
    await once(receiver, 'listening');
    receiverPort = (receiver.address() as { port: number }).port;
  });
  afterAll(() => {
    receiver.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function configFor(port: number, database: string): string {
    return everySecondSpeedConfig(join(dir, `monitor-${String(port)}.yaml`), `http://127.0.0.1:${String(port)}`, database, ['expect: { download_mbps: ">= 0.001" }', 'alert_after: 3'], [`json://127.0.0.1:${String(receiverPort)}/alerts`]);
  }

  it('a server down: three failed runs, one alert through apprise; back up: one recovery; every run in the history', async () => {
    const port = await freePort();
    const database = join(dir, 'alerts.db');
    const monitor = startMonitor(configFor(port, database));
    let server: TestServer | undefined;
    try {
      await until('the alert', () => received.length >= 1, 30_000);
      expect(runLines(monitor.lines).length).toBeGreaterThanOrEqual(3);
      server = await startTestServer({ PORT: String(port), NETDIAG_EVENTS_SINK: 'none', NETDIAG_RATE_LIMITS: 'speedtest=100000,ip=100000', ...LOOPBACK_TRANSFERS });
      await until('the recovery', () => received.length >= 2, 60_000);
      // Runs go on meeting the expectation: nothing more is sent.
      const runsAtRecovery = runLines(monitor.lines).length;
      await until('another good run', () => runLines(monitor.lines).length > runsAtRecovery, 30_000);
      monitor.child.kill('SIGTERM');
      const [code] = (await once(monitor.child, 'exit')) as [number | null];
      expect(code).toBe(0);
    } finally {
      if (monitor.child.exitCode === null) monitor.child.kill('SIGKILL');
      await server?.close();
    }
    expect(received).toHaveLength(2);
    const [alert, recovery] = received;
    expect(alert?.title).toBe(`netdiag monitor: line speed on http://127.0.0.1:${String(port)}: 3 breaches in a row`);
    // Each of the three breaches the title counts, with its time and the command's reason.
    expect(alert?.message.split('\n')).toEqual(Array.from({ length: 3 }, (): unknown => expect.stringMatching(/^- [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z: the check did not run: .*(ECONNREFUSED|connect)/)));
    expect(recovery?.title).toBe(`netdiag monitor: line speed on http://127.0.0.1:${String(port)} recovered`);
    expect(recovery?.message).toMatch(/download_mbps [0-9.]+/);
    // Told apart by Apprise's notification type, as a chat shows them.
    expect([alert?.type, recovery?.type]).toEqual(['failure', 'success']);

    const db = new DatabaseSync(database, { readOnly: true });
    const rows = db.prepare('SELECT ok, error FROM runs ORDER BY id').all() as { ok: number; error: string | null }[];
    db.close();
    expect(rows).toHaveLength(runLines(monitor.lines).length);
    expect(rows.slice(0, 3).every((r) => r.ok === 0 && (r.error ?? '') !== '')).toBe(true);
    expect(rows.at(-1)?.ok).toBe(1);
  }, 150_000);

  it('SIGKILL in the middle of a test: the history is intact with every committed run, and the restarted monitor runs at its pace', async () => {
    const server = await startTestServer({ NETDIAG_EVENTS_SINK: 'none', NETDIAG_RATE_LIMITS: 'speedtest=100000,ip=100000', ...LOOPBACK_TRANSFERS });
    const database = join(dir, 'killed.db');
    const config = configFor(server.port, database);
    try {
      const first = startMonitor(config);
      await until('two runs', () => runLines(first.lines).length >= 2, 60_000);
      // The next run starts within a second of the last one's end and a light test takes seconds:
      // two seconds on, it is in the middle of one.
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      const committed = runLines(first.lines).length;
      first.child.kill('SIGKILL');
      await once(first.child, 'exit');

      const db = new DatabaseSync(database, { readOnly: true });
      expect(db.prepare('PRAGMA integrity_check').get()).toEqual({ integrity_check: 'ok' });
      expect((db.prepare('SELECT count(*) AS n FROM runs').get() as { n: number }).n).toBe(committed);
      db.close();

      const second = startMonitor(config);
      try {
        await until('a run after the restart', () => runLines(second.lines).length >= 1, 60_000);
        const startedAfter = Date.now();
        await until('another', () => runLines(second.lines).length >= 2, 60_000);
        // One after another, each a whole light test: no catch-up burst of the slots it missed.
        expect(Date.now() - startedAfter).toBeGreaterThan(1_000);
      } finally {
        second.child.kill('SIGTERM');
        await once(second.child, 'exit');
      }
      const after = new DatabaseSync(database, { readOnly: true });
      expect((after.prepare('SELECT count(*) AS n FROM runs').get() as { n: number }).n).toBe(committed + runLines(second.lines).length);
      after.close();
    } finally {
      await server.close();
    }
  }, 180_000);

  it('SIGHUP reads the configuration again: an invalid one is said with its line and the running one kept; a valid one takes over', async () => {
    const port = await freePort();
    const file = join(dir, 'reload.yaml');
    const configOf = (name: string, every: string) => `servers: [http://127.0.0.1:${String(port)}]\ndatabase: ${join(dir, 'reload.db')}\nlisten: off\nchecks:\n  - name: ${name}\n    run: rpm\n    ${every}\n    spread: 0s\n    alert_after: 1000\n`;
    writeFileSync(file, configOf('first', 'cron: "* * * * * *"'));
    const monitor = startMonitor(file);
    const runsOf = (name: string) => monitor.lines.filter((l) => l.startsWith(`netdiag monitor: ${name} on `)).length;
    try {
      await until('two runs of the first check', () => runsOf('first') >= 2, 20_000);
      writeFileSync(file, configOf('second', 'every: 30'));
      monitor.child.kill('SIGHUP');
      await until('the refusal', () => monitor.lines.some((l) => l.includes('was not taken')), 10_000);
      expect(monitor.lines).toContain(`netdiag monitor: ${file}:7: checks[0].every: "30" is not an interval (a number and s, m, h or d: 90s, 30m, 6h, 1d)`);
      const before = runsOf('first');
      await until('the first check going on', () => runsOf('first') > before, 10_000);
      writeFileSync(file, configOf('second', 'cron: "* * * * * *"'));
      monitor.child.kill('SIGHUP');
      await until('a run of the second check', () => runsOf('second') >= 1, 20_000);
      const firstAtSwitch = runsOf('first');
      await until('another run of the second check', () => runsOf('second') >= 3, 20_000);
      // The first check stopped with the reload.
      expect(runsOf('first')).toBe(firstAtSwitch);
      expect(monitor.lines).toContain(`netdiag monitor: the configuration ${file} is read again`);
    } finally {
      monitor.child.kill('SIGTERM');
      await once(monitor.child, 'exit');
    }
  }, 90_000);

  it.skipIf(!promtoolReady)("serves /metrics on the address it is given: each run's figures, counts and schedule, in a text promtool accepts; the rules file's own tests pass", async () => {
    const server = await startTestServer({ NETDIAG_EVENTS_SINK: 'none', NETDIAG_RATE_LIMITS: 'speedtest=100000,ip=100000', ...LOOPBACK_TRANSFERS });
    const metricsPort = await freePort();
    const file = join(dir, 'metrics.yaml');
    writeFileSync(file, `servers: [${server.url}]\ndatabase: ${join(dir, 'metrics.db')}\nlisten: 127.0.0.1:${String(metricsPort)}\nchecks:\n  - name: line speed\n    run: speedtest\n    mode: light\n    cron: "* * * * * *"\n    spread: 0s\n    expect: { download_mbps: ">= 0.001" }\n`);
    const monitor = startMonitor(file);
    try {
      await until('a run', () => runLines(monitor.lines).length >= 1, 60_000);
      expect(monitor.lines.find((l) => l.startsWith('netdiag monitor: 1 check'))).toBe(`netdiag monitor: 1 check against ${server.url}; history in ${join(dir, 'metrics.db')}; page on http://127.0.0.1:${String(metricsPort)}/, metrics on http://127.0.0.1:${String(metricsPort)}/metrics`);
      const text = await (await fetch(`http://127.0.0.1:${String(metricsPort)}/metrics`)).text();
      const labels = `check="line speed",server="${server.url}"`;
      const value = (series: string) => Number(new RegExp(`^${series.replace(/[{}()[\]|.*+?^$\\]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1]);
      expect(value(`netdiag_monitor_runs_total{${labels},outcome="ok"}`)).toBeGreaterThanOrEqual(1);
      expect(value(`netdiag_monitor_breaches_in_a_row{${labels}}`)).toBe(0);
      expect(value(`netdiag_monitor_alerting{${labels}}`)).toBe(0);
      expect(value(`netdiag_monitor_figure{${labels},figure="download_mbps"}`)).toBeGreaterThan(0);
      expect(value(`netdiag_monitor_next_run_timestamp_seconds{${labels}}`)).toBeGreaterThan(Date.now() / 1000 - 60);
      // The exposition format, as Prometheus's own tool reads it.
      const check = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
      expect(check.status, check.stdout + check.stderr).toBe(0);
      expect(await (await fetch(`http://127.0.0.1:${String(metricsPort)}/other`)).text()).toBe('Not found: the monitor serves its page at /, its history at /history.json, its latest results at /latest.json and its metrics at /metrics\n');
    } finally {
      monitor.child.kill('SIGTERM');
      await once(monitor.child, 'exit');
      await server.close();
    }
    const rules = fileURLToPath(new URL('../../deploy/prometheus/netdiag-monitor-rules.test.yml', import.meta.url));
    const tested = spawnSync('promtool', ['test', 'rules', rules], { encoding: 'utf8' });
    expect(tested.status, tested.stdout + tested.stderr).toBe(0);
  }, 90_000);

  // A full disk: a small tmpfs, which needs root to mount (CI runs as root).
  it.skipIf(process.getuid?.() !== 0)('a history that can no longer be written (the disk full): said with its path, and the monitor exits 1 rather than run on unrecorded', async () => {
    const mount = join(dir, 'tiny');
    mkdirSync(mount);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', mount]);
    try {
      const database = join(mount, 'monitor.db');
      // Two servers, two loops: the one that fails must end the other too, or the process lives on.
      const config = configFor(await freePort(), database);
      const other = await freePort();
      writeFileSync(config, readFileSync(config, 'utf8').replace(/^servers: \[(.*)\]$/m, `servers: [$1, http://127.0.0.1:${String(other)}]`));
      const monitor = startMonitor(config);
      await until('a run', () => runLines(monitor.lines).length >= 1, 20_000);
      // Whatever is left of the disk, taken.
      try {
        writeFileSync(join(mount, 'filler'), Buffer.alloc(1024 * 1024));
      } catch {
        // ENOSPC once it is full: what this wanted.
      }
      const [code] = (await once(monitor.child, 'exit')) as [number | null];
      expect(code).toBe(1);
      expect(monitor.lines.some((l) => l.startsWith(`netdiag monitor: cannot record a run in the history ${database}: `) || l.startsWith(`netdiag monitor: cannot record the alert state in the history ${database}: `))).toBe(true);
    } finally {
      execFileSync('umount', [mount]);
    }
  }, 60_000);
});
