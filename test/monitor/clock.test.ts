// `netdiag monitor` when the machine's clock jumps (docs/monitor.md, "Schedules"), the jump made real for the
// monitor's process alone by libfaketime (Debian's faketime): its wall clock is moved two hours
// forward and then back while its monotonic clock runs on, as when the clock is set or the
// machine wakes from sleep. Each jump is said in the log with the next run's time; the two
// hourly slots jumped over give one run, not two; the jump back gives none; the history keeps
// every run.
import { once } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { runLinesOf, startMonitor, until } from '../support/monitor-process.js';
import { requireCommands } from '../support/system.js';
import { freePort } from '../support/wait.js';

/** libfaketime's thread-safe library, wherever the architecture puts it. */
const library = readdirSync('/usr/lib', { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => join('/usr/lib', e.name, 'faketime', 'libfaketimeMT.so.1'))
  .find((path) => existsSync(path));
const ready = requireCommands("the monitor's clock", ['faketime'], 'faketime') && library !== undefined;

const dir = mkdtempSync(join(tmpdir(), 'netdiag-monitor-clock-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!ready)('netdiag monitor across a clock that jumps', () => {
  it('says a jump forward and one back with the next run, runs once for the slots jumped over, and keeps every run', async () => {
    // The offset libfaketime reads afresh on each call (FAKETIME_NO_CACHE).
    const offset = join(dir, 'offset');
    writeFileSync(offset, '+0\n');
    const database = join(dir, 'monitor.db');
    const config = join(dir, 'monitor.yaml');
    // Nothing listens on the server's port: each run fails at once, and is recorded all the same.
    writeFileSync(config, `servers: [http://127.0.0.1:${String(await freePort())}]\ndatabase: ${database}\nlisten: off\nchecks:\n  - name: hourly\n    run: rpm\n    every: 1h\n    spread: 0s\n    alert_after: 1000\n`);
    const monitor = startMonitor(config, { LD_PRELOAD: library ?? '', FAKETIME_TIMESTAMP_FILE: offset, FAKETIME_NO_CACHE: '1', FAKETIME_DONT_FAKE_MONOTONIC: '1' });
    const jumps = () => monitor.lines.filter((l) => l.startsWith('netdiag monitor: the clock moved '));
    try {
      await until('the start', () => monitor.lines.some((l) => l.startsWith('netdiag monitor: 1 check')), 10_000, monitor.lines);
      // The first slot is an hour after the start: nothing runs yet.
      writeFileSync(offset, '+2h\n');
      await until('the jump forward said', () => jumps().length >= 1, 20_000, monitor.lines);
      await until('the run it calls for', () => runLinesOf(monitor.lines, 'hourly').length >= 1, 20_000, monitor.lines);
      writeFileSync(offset, '+0\n');
      await until('the jump back said', () => jumps().length >= 2, 20_000, monitor.lines);
      // One wait step more: nothing runs after a jump back.
      await new Promise((resolve) => setTimeout(resolve, 11_000));
    } finally {
      monitor.child.kill('SIGTERM');
      await once(monitor.child, 'exit');
    }
    const [forward, back] = jumps();
    expect(forward).toMatch(/^netdiag monitor: the clock moved forward by 72\d\d s \(set, or the machine slept\): hourly on http:\/\/127\.0\.0\.1:\d+ runs next at \S+Z$/);
    expect(back).toMatch(/^netdiag monitor: the clock moved back by 72\d\d s \(set, or the machine slept\): hourly on http:\/\/127\.0\.0\.1:\d+ runs next at \S+Z$/);
    // Two slots jumped over (start + 1 h, start + 2 h): one run.
    expect(runLinesOf(monitor.lines, 'hourly')).toHaveLength(1);
    const db = new DatabaseSync(database, { readOnly: true });
    expect(db.prepare('PRAGMA integrity_check').get()).toEqual({ integrity_check: 'ok' });
    expect((db.prepare('SELECT count(*) AS n FROM runs').get() as { n: number }).n).toBe(1);
    db.close();
  }, 90_000);
});
