// The monitor's history file, through each SQLite driver (sqlite-driver.ts): created and
// migrated, kept across opens, a newer schema refused rather than misread, old runs pruned, and a
// file that cannot be made or written (a full disk) said with its path, with every run committed
// before kept. Then the file moving between the drivers, as between Node 22 and Node 20. The raw
// reads use node:sqlite, so the WebAssembly driver's file is read by a SQLite other than its own.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultSqliteDriver, type SqliteDriverName } from './sqlite-driver.js';
import { openStore as openWith, StoreError, type RunRecord } from './store.js';

/** What version 5 added, taken away again: a file as version 4 left it. */
const V5_UNDONE = 'ALTER TABLE runs DROP COLUMN skipped; ALTER TABLE runs DROP COLUMN bytes_down; ALTER TABLE runs DROP COLUMN bytes_up; DROP TABLE outlet_cursor; DROP TABLE monitor_state;';

const run = (startedAt: number, ok = true): RunRecord => ({ check: 'speed', server: 'http://a', startedAt, durationMs: 1000, ok, error: ok ? null : 'down', figures: ok ? { download_mbps: 93.5 } : {}, breaches: ok ? [] : ['the check did not run: down'] });

/** Each driver, with the journal it keeps, the files beside the database that journal leaves while open, and its words for a file it cannot open. */
const DRIVERS: { driver: SqliteDriverName; journal: string; beside: string[]; cannotOpen: (path: string) => string }[] = [
  { driver: 'node:sqlite', journal: 'wal', beside: ['-wal', '-shm'], cannotOpen: () => 'unable to open database file' },
  { driver: 'node-sqlite3-wasm', journal: 'delete', beside: [], cannotOpen: (path) => `Could not open the database "${path}"` },
];

describe.each(DRIVERS)("the monitor's history through $driver", ({ driver, journal, beside, cannotOpen }) => {
  const openStore = (path: string) => openWith(path, driver);
  const dir = mkdtempSync(join(tmpdir(), `netdiag-store-${driver.replace(/\W/g, '-')}-`));
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it(`creates a file in ${journal} journal mode at the latest schema version (5), in a folder it makes, and keeps runs and alert state across opens`, async () => {
    const path = join(dir, 'deep', 'er', 'monitor.db');
    const store = await openStore(path);
    store.addRun(run(1000));
    store.addRun(run(2000, false));
    store.setAlertState('speed', 'http://a', { streak: 1, alerting: false });
    store.close();
    const raw = new DatabaseSync(path, { readOnly: true });
    expect(raw.prepare('PRAGMA journal_mode').get()).toEqual({ journal_mode: journal });
    expect(raw.prepare('PRAGMA user_version').get()).toEqual({ user_version: 5 });
    raw.close();
    const again = await openStore(path);
    expect(again.runs().map((r) => [r.startedAt, r.ok, r.figures, r.breaches])).toEqual([
      [1000, true, { download_mbps: 93.5 }, []],
      [2000, false, {}, ['the check did not run: down']],
    ]);
    expect(again.alertState('speed', 'http://a')).toEqual({ streak: 1, alerting: false });
    expect(again.alertState('other', 'http://a')).toEqual({ streak: 0, alerting: false });
    expect(again.runs(1500)).toHaveLength(1);
    // Retention: runs before the bound go, those after stay.
    expect(again.prune(1500)).toBe(1);
    expect(again.runs().map((r) => r.startedAt)).toEqual([2000]);
    again.close();
  });

  it(`keeps the history private to its user: a folder it makes 0700, the database${beside.map((b) => `, ${b}`).join('')} 0600, under umask 022`, async () => {
    const before = process.umask(0o022);
    try {
      const path = join(dir, 'private', 'monitor.db');
      const store = await openStore(path);
      store.addRun(run(1000));
      const mode = (file: string) => (statSync(file).mode & 0o777).toString(8);
      expect([mode(join(dir, 'private')), mode(path), ...beside.map((b) => mode(`${path}${b}`))]).toEqual(['700', '600', ...beside.map(() => '600')]);
      store.close();
      // A history an earlier netdiag left readable to all is made private when opened.
      const old = join(dir, 'old.db');
      writeFileSync(old, '');
      chmodSync(old, 0o644);
      (await openStore(old)).close();
      expect(mode(old)).toBe('600');
    } finally {
      process.umask(before);
    }
  });

  it('migrates a version 1 file in place: its runs and alert state kept, its runs the monitor\'s own', async () => {
    const path = join(dir, 'v1.db');
    // Version 1's schema as it shipped, with one run and one alert state.
    const raw = new DatabaseSync(path);
    raw.exec(`CREATE TABLE runs (id INTEGER PRIMARY KEY, check_name TEXT NOT NULL, server TEXT NOT NULL, started_at INTEGER NOT NULL, duration_ms INTEGER NOT NULL, ok INTEGER NOT NULL, error TEXT, figures TEXT NOT NULL, breaches TEXT NOT NULL);
      CREATE INDEX runs_by_time ON runs (started_at);
      CREATE TABLE alert_state (check_name TEXT NOT NULL, server TEXT NOT NULL, streak INTEGER NOT NULL, alerting INTEGER NOT NULL, PRIMARY KEY (check_name, server));
      INSERT INTO runs (check_name, server, started_at, duration_ms, ok, error, figures, breaches) VALUES ('speed', 'http://a', 5000, 900, 1, NULL, '{"download_mbps":50}', '[]');
      INSERT INTO alert_state VALUES ('speed', 'http://a', 2, 1);
      PRAGMA user_version = 1;`);
    raw.close();
    const store = await openStore(path);
    expect(store.runs()).toEqual([{ check: 'speed', server: 'http://a', startedAt: 5000, durationMs: 900, ok: true, error: null, figures: { download_mbps: 50 }, breaches: [], source: 'monitor', limited: false, chosen: null, sourceAddress: null }]);
    expect(store.alertState('speed', 'http://a')).toEqual({ streak: 2, alerting: true });
    expect(store.lastMet('speed', 'http://a')).toEqual({ download_mbps: 50 });
    store.close();
    const after = new DatabaseSync(path, { readOnly: true });
    expect(after.prepare('PRAGMA user_version').get()).toEqual({ user_version: 5 });
    after.close();
  });

  it('migrates a version 3 file to 4: its runs kept with no server chosen nor source, and a run records what auto chose and its source', async () => {
    const path = join(dir, 'v3.db');
    const v3 = await openStore(path);
    v3.addRun(run(1000));
    v3.close();
    // Back to version 3 as it shipped: the runs table without the two columns version 4 adds.
    const raw = new DatabaseSync(path);
    raw.exec(`${V5_UNDONE} ALTER TABLE runs DROP COLUMN chosen; ALTER TABLE runs DROP COLUMN source_address; PRAGMA user_version = 3;`);
    raw.close();
    const store = await openStore(path);
    store.addRun({ ...run(2000), server: 'auto', chosen: 'http://near:8080', sourceAddress: '192.0.2.10' });
    expect(store.runs().map((r) => [r.startedAt, r.server, r.chosen, r.sourceAddress])).toEqual([
      [1000, 'http://a', null, null],
      [2000, 'auto', 'http://near:8080', '192.0.2.10'],
    ]);
    store.close();
  });

  it('migrates a version 4 file to 5: its runs kept, none skipped and no bytes counted; a run records its bytes, a skipped run its reason', async () => {
    const path = join(dir, 'v4.db');
    const v4 = await openStore(path);
    v4.addRun(run(1000));
    v4.close();
    const raw = new DatabaseSync(path);
    raw.exec(`${V5_UNDONE} PRAGMA user_version = 4;`);
    raw.close();
    const store = await openStore(path);
    store.addRun({ ...run(2000), bytesDown: 25_000_000, bytesUp: 12_000_000 });
    store.addRun({ ...run(3000, false), error: 'paused until 2026-12-06T21:00:00.000Z', breaches: [], skipped: 'paused until 2026-12-06T21:00:00.000Z' });
    expect(store.runs().map((r) => [r.startedAt, r.skipped, r.bytesDown, r.bytesUp])).toEqual([
      [1000, undefined, undefined, undefined],
      [2000, undefined, 25_000_000, 12_000_000],
      [3000, 'paused until 2026-12-06T21:00:00.000Z', undefined, undefined],
    ]);
    // A skipped run was never judged: it is not among the runs an alert recounts.
    expect(store.judgedRuns('speed', 'http://a', 10).map((r) => r.startedAt)).toEqual([2000, 1000]);
    store.close();
  });

  it("numbers the runs for the outlets, keeps each outlet's cursor and the monitor's own state across opens, and counts the bytes moved", async () => {
    const path = join(dir, 'outlets.db');
    const store = await openStore(path);
    expect(store.lastRunId()).toBe(0);
    store.addRun({ ...run(1000), bytesDown: 100, bytesUp: 50 });
    store.addRun({ ...run(2000), check: 'other', bytesDown: 7 });
    store.addRun(run(3000));
    const all = store.runsAfter(0, 10);
    expect(all.map((r) => r.startedAt)).toEqual([1000, 2000, 3000]);
    const [first, second, third] = all.map((r) => r.id);
    expect(store.lastRunId()).toBe(third);
    expect(store.runsAfter(first ?? 0, 1).map((r) => r.id)).toEqual([second]);
    expect(store.bytesMovedSince(0)).toBe(157);
    expect(store.bytesMovedSince(0, 'speed')).toBe(150);
    expect(store.bytesMovedSince(1500)).toBe(7);
    expect(store.outletCursor('mqtt')).toBeUndefined();
    store.setOutletCursor('mqtt', second ?? 0);
    store.setStateValue('paused_until', '5000');
    store.close();
    const again = await openStore(path);
    expect(again.outletCursor('mqtt')).toBe(second);
    expect(again.stateValue('paused_until')).toBe('5000');
    again.setStateValue('paused_until', undefined);
    expect(again.stateValue('paused_until')).toBeUndefined();
    again.close();
  });

  it('imports runs once: a result already there, or twice in one file, is added once; imported runs set no known answer', async () => {
    const store = await openStore(join(dir, 'import.db'));
    const page = (at: number): RunRecord => ({ ...run(at), check: 'page', server: 'page', figures: { answers: 'imported' } });
    expect(store.importRuns([page(1000), page(2000), page(2000)])).toBe(2);
    expect(store.importRuns([page(2000), page(3000)])).toBe(1);
    expect(store.runs().map((r) => [r.startedAt, r.source])).toEqual([
      [1000, 'import'],
      [2000, 'import'],
      [3000, 'import'],
    ]);
    expect(store.lastMet('page', 'page')).toBeUndefined();
    store.close();
  });

  it("keeps the figures of a check's last run that met every expectation when old runs are deleted", async () => {
    const store = await openStore(join(dir, 'known.db'));
    store.addRun({ ...run(1000), figures: { answers: '192.0.2.1' } });
    store.addRun({ ...run(2000), figures: { answers: '192.0.2.9' }, breaches: ['answers "192.0.2.9" (expected unchanged from "192.0.2.1")'] });
    store.addRun(run(3000, false));
    expect(store.prune(2500)).toBe(2);
    expect(store.lastMet('speed', 'http://a')).toEqual({ answers: '192.0.2.1' });
    store.close();
  });

  it("tells a run the server's rate limit refused from one that failed, and leaves it out of the runs a streak is judged on, as imported ones", async () => {
    const store = await openStore(join(dir, 'limited.db'));
    store.addRun(run(1000, false));
    store.addRun({ ...run(2000, false), error: 'refused by the rate limit', breaches: [], limited: true });
    store.importRuns([{ ...run(2500), figures: { download_mbps: 1 } }]);
    store.addRun({ ...run(3000), breaches: ['download_mbps 93.5 (expected >= 100)'] });
    store.addRun({ ...run(4000), check: 'other' });
    expect(store.runs().map((r) => [r.startedAt, r.ok, r.limited])).toEqual([
      [1000, false, false],
      [2000, false, true],
      [2500, true, false],
      [3000, true, false],
      [4000, true, false],
    ]);
    // Newest first, the check's and server's own, neither the limited run nor the imported one.
    expect(store.judgedRuns('speed', 'http://a', 5).map((r) => r.startedAt)).toEqual([3000, 1000]);
    expect(store.judgedRuns('speed', 'http://a', 1).map((r) => r.startedAt)).toEqual([3000]);
    store.close();
  });

  it('keeps a notice not yet delivered across a close and an open, with its tries, until it is done', async () => {
    const path = join(dir, 'outbox.db');
    const store = await openStore(path);
    const first = store.queueNotice('{"kind":"alert"}', 'http://hook.example/a');
    const second = store.queueNotice('{"kind":"recovery"}', 'json://hook.example/b');
    store.noticeTried(first, 2);
    store.noticeDone(second);
    store.close();
    const again = await openStore(path);
    expect(again.pendingNotices()).toEqual([{ id: first, notice: '{"kind":"alert"}', target: 'http://hook.example/a', attempts: 2 }]);
    again.noticeDone(first);
    expect(again.pendingNotices()).toEqual([]);
    again.close();
  });

  it('refuses a file a newer netdiag wrote, saying so, and leaves it as it was', async () => {
    const path = join(dir, 'newer.db');
    const raw = new DatabaseSync(path);
    raw.exec('PRAGMA user_version = 7');
    raw.close();
    await expect(openStore(path)).rejects.toThrow(new StoreError(`cannot open the history ${path}: its schema is version 7, newer than this netdiag knows (5): a newer netdiag wrote it`));
    const after = new DatabaseSync(path, { readOnly: true });
    expect(after.prepare('PRAGMA user_version').get()).toEqual({ user_version: 7 });
    after.close();
  });

  it("says which file it could not open when its tables are not its version's (another program's, or damaged), as no bare SQL error", async () => {
    const path = join(dir, 'foreign.db');
    const raw = new DatabaseSync(path);
    raw.exec('CREATE TABLE notes (text TEXT); PRAGMA user_version = 2');
    raw.close();
    await expect(openStore(path)).rejects.toThrow(new StoreError(`cannot open the history ${path}: no such table: runs`));
  });

  it('says which file it could not open when its folder cannot be made', async () => {
    const blocked = join(dir, 'blocked');
    // A file where the folder should be.
    writeFileSync(blocked, 'not a folder');
    await expect(openStore(join(blocked, 'monitor.db'))).rejects.toThrow(/^cannot open the history .*blocked\/monitor\.db: /);
  });

  // A read-only file system: a tmpfs remounted read-only, which needs root (CI runs as root; root
  // writes a file whatever its mode, so a mode would not show it).
  it.skipIf(process.getuid?.() !== 0)('says which file it could not open when its file system is read-only, and leaves the runs in it', async () => {
    const mount = join(dir, 'readonly');
    mkdirSync(mount);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', mount]);
    try {
      const path = join(mount, 'monitor.db');
      const store = await openStore(path);
      store.addRun(run(1000));
      store.close();
      execFileSync('mount', ['-o', 'remount,ro', mount]);
      const escape = (text: string) => text.replace(/[.]/g, '\\.');
      await expect(openStore(path)).rejects.toThrow(new RegExp(`^cannot open the history ${escape(path)}: ${escape(cannotOpen(path))} \\(${escape(mount)} is on a read-only file system\\)$`));
      execFileSync('mount', ['-o', 'remount,rw', mount]);
      const again = await openStore(path);
      expect(again.runs().map((r) => r.startedAt)).toEqual([1000]);
      again.close();
    } finally {
      execFileSync('umount', [mount]);
    }
  });

  // A full disk: a 128 kB tmpfs, which needs root to mount (CI runs as root).
  it.skipIf(process.getuid?.() !== 0)('says which file it could not write when the disk is full, and keeps every run it had committed', async () => {
    const mount = join(dir, 'tiny');
    mkdirSync(mount);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', mount]);
    try {
      const path = join(mount, 'monitor.db');
      const store = await openStore(path);
      const big = (i: number): RunRecord => ({ ...run(i), figures: { notes: 'x'.repeat(8000) } });
      let committed = 0;
      let failure: unknown;
      for (let i = 1; i <= 100 && failure === undefined; i++) {
        try {
          store.addRun(big(i));
          committed = i;
        } catch (err) {
          failure = err;
        }
      }
      expect(failure).toBeInstanceOf(StoreError);
      expect((failure as Error).message).toMatch(new RegExp(`^cannot record a run in the history ${path.replace(/[.]/g, '\\.')}: .*(full|disk)`, 'i'));
      expect(committed).toBeGreaterThan(0);
      expect(store.runs()).toHaveLength(committed);
      store.close();
    } finally {
      execFileSync('umount', [mount]);
    }
  });
});

describe('one history file through both drivers, as it moves between Node 22 and Node 20', () => {
  const dir = mkdtempSync(join(tmpdir(), 'netdiag-store-both-'));
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });
  /** A Node of this suite's running `script` as CommonJS in the project (so node-sqlite3-wasm resolves), which ends by killing itself. */
  const killedMidWay = (script: string) => spawnSync(process.execPath, ['--disable-warning=ExperimentalWarning', '-e', `${script}; process.kill(process.pid, 'SIGKILL')`], { cwd: process.cwd(), encoding: 'utf8' });

  it('uses node:sqlite on this Node, which has it', async () => {
    expect(await defaultSqliteDriver()).toBe('node:sqlite');
  });

  it("reads node:sqlite's WAL file, a run still only in its log included, and hands it back with every run", async () => {
    const path = join(dir, 'moved.db');
    const first = await openWith(path, 'node:sqlite');
    first.addRun(run(1000));
    first.close();
    // A run committed to the log by a monitor killed before any checkpoint (SIGKILL).
    const killed = killedMidWay(`const { DatabaseSync } = require('node:sqlite'); const db = new DatabaseSync(${JSON.stringify(path)}); db.exec("PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0; INSERT INTO runs (check_name, server, started_at, duration_ms, ok, error, figures, breaches) VALUES ('speed', 'http://a', 2000, 900, 1, NULL, '{}', '[]')")`);
    expect(killed.signal).toBe('SIGKILL');
    expect(existsSync(`${path}-wal`)).toBe(true);
    const second = await openWith(path, 'node-sqlite3-wasm');
    expect(second.runs().map((r) => r.startedAt)).toEqual([1000, 2000]);
    second.addRun(run(3000));
    second.close();
    const third = await openWith(path, 'node:sqlite');
    expect(third.runs().map((r) => r.startedAt)).toEqual([1000, 2000, 3000]);
    third.close();
    const raw = new DatabaseSync(path, { readOnly: true });
    expect(raw.prepare('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'wal' });
    expect(raw.prepare('PRAGMA integrity_check').get()).toEqual({ integrity_check: 'ok' });
    raw.close();
  });

  it("says the WebAssembly driver's lock folder that a monitor killed mid-write left, and what to do; once it is removed, the half-written run is rolled back and the others kept", async () => {
    const path = join(dir, 'locked.db');
    const store = await openWith(path, 'node-sqlite3-wasm');
    store.addRun(run(1000));
    store.close();
    const killed = killedMidWay(`const { Database } = require('node-sqlite3-wasm'); const db = new Database(${JSON.stringify(path)}); db.exec("BEGIN IMMEDIATE; INSERT INTO runs (check_name, server, started_at, duration_ms, ok, error, figures, breaches) VALUES ('speed', 'http://a', 2000, 900, 1, NULL, '{}', '[]')")`);
    expect(killed.signal).toBe('SIGKILL');
    expect(existsSync(`${path}.lock`)).toBe(true);
    await expect(openWith(path, 'node-sqlite3-wasm')).rejects.toThrow(
      new StoreError(`cannot open the history ${path}: database is locked (node-sqlite3-wasm locks it with the folder ${path}.lock: another netdiag is using the history, or one was stopped while writing; if no netdiag is running, remove that folder)`),
    );
    rmSync(`${path}.lock`, { recursive: true });
    const again = await openWith(path, 'node-sqlite3-wasm');
    expect(again.runs().map((r) => r.startedAt)).toEqual([1000]);
    again.close();
  }, 20_000);
});
