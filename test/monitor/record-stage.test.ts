// The record stage of a monitor run (docs/monitor.md, "History"): the run, its streak and alert
// state, its notices in the outbox and the pruning are one transaction. The history's own SQLite
// refuses one write in the middle (a trigger raising ABORT: a real constraint, set on the file
// before the monitor starts), and the history must then be as it was before that run: no run
// recorded without its streak, no streak without its alert kept. The monitor says the fault with
// the file and exits 1, as for any history it cannot write.
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/cli/monitor/store.js';
import { everySecondSpeedConfig, startMonitor, until } from '../support/monitor-process.js';
import { freePort } from '../support/wait.js';

/** What the history holds, table by table. */
function contents(database: string): { runs: number; alertStates: number; outbox: number; integrity: string } {
  const db = new DatabaseSync(database, { readOnly: true });
  try {
    const count = (table: string) => (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
    const integrity = (db.prepare('PRAGMA integrity_check').get() as { integrity_check: string }).integrity_check;
    return { runs: count('runs'), alertStates: count('alert_state'), outbox: count('outbox'), integrity };
  } finally {
    db.close();
  }
}

describe("a monitor run's record stage", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'netdiag-record-stage-'));
  });
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    // A failed run: its row goes in first, then the streak it starts, which the file refuses.
    ['the alert state', 'alert_state', 3],
    // alert_after 1: the run and its streak go in, then the alert for the outbox, which the file refuses.
    ['the outbox', 'outbox', 1],
  ])('a write to %s refused mid-way leaves the history as before the run, said, and the monitor exits 1', async (_, table, alertAfter) => {
    const database = join(dir, `${table}.db`);
    // The schema as the monitor makes it, then the refusal on the table named.
    (await openStore(database)).close();
    const db = new DatabaseSync(database);
    db.exec(`CREATE TRIGGER refuse_${table} BEFORE INSERT ON ${table} BEGIN SELECT RAISE(ABORT, 'this test refuses writes to ${table}'); END;`);
    db.close();
    // A server nothing listens on: each run fails at once, a breach.
    const down = await freePort();
    const config = everySecondSpeedConfig(join(dir, `${table}.yaml`), `http://127.0.0.1:${String(down)}`, database, [`alert_after: ${String(alertAfter)}`], [`https://127.0.0.1:${String(down)}/hook`]);
    const monitor = startMonitor(config);
    const exit = once(monitor.child, 'exit') as Promise<[number | null]>;
    await until('the monitor to end', () => monitor.child.exitCode !== null, 60_000, monitor.lines);
    const [code] = await exit;
    expect(contents(database)).toEqual({ runs: 0, alertStates: 0, outbox: 0, integrity: 'ok' });
    expect(code, monitor.lines.join('\n')).toBe(1);
    expect(monitor.lines).toContain(`netdiag monitor: cannot record a run in the history ${database}: this test refuses writes to ${table}`);
  }, 90_000);
});
