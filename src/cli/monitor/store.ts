// The monitor's history (docs/monitor.md, "History"): one SQLite file on the user's machine,
// through node:sqlite or, on a Node without it, SQLite in WebAssembly (sqlite-driver.ts). Each
// transaction synced in full, so a run is on disk once its insert returns and a monitor killed
// mid-test loses nothing it committed; the
// schema carries its version (PRAGMA user_version) and each newer version is a migration applied
// in one transaction. Alert state (breaches in a row, alerting or not) lives beside the runs, so a
// restart neither repeats an alert nor forgets a streak.
import { accessSync, chmodSync, closeSync, constants, existsSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { defaultSqliteDriver, openSqlite, SqliteDriverError, type SqliteDatabase, type SqliteDriverName } from './sqlite-driver.js';

export interface RunRecord {
  check: string;
  server: string;
  /** ms since the epoch. */
  startedAt: number;
  durationMs: number;
  /** The check ran and reported figures (false: the server was down, the command failed). */
  ok: boolean;
  /** Why it did not run, when it did not. */
  error: string | null;
  /** The figures its --json reported (top level), or none. */
  figures: Record<string, unknown>;
  /** Each expectation it missed, in words. */
  breaches: string[];
  /** Where it came from: a run of the monitor, or a result imported from the page's history file. */
  source?: 'monitor' | 'import';
  /** The server's rate limit refused it (ok false, `error` the command's reason): never judged, it counts in no streak. */
  limited?: boolean;
  /** The server the run measured against when `server` is `auto` (chosen at the run); null when none was chosen or none could be. */
  chosen?: string | null;
  /** The local address the run's connections were bound to (the check's `source:`), or null. */
  sourceAddress?: string | null;
  /** It was not run, and why (paused, the data budget, the link busy; `error` says it too): ok false, never judged, in no streak. */
  skipped?: string | null;
  /** Bytes the run moved from the server and to it, as its command reported them; null when it reported none. */
  bytesDown?: number | null;
  bytesUp?: number | null;
}

/** A run as an outlet reads it: with its row in the history, where the outlet's cursor stands (outlets/). */
export type NumberedRun = RunRecord & { id: number };

/** A notice not yet delivered to one target, kept across a stop (alerts.ts). */
interface PendingNotice {
  id: number;
  /** The notice, as JSON. */
  notice: string;
  target: string;
  /** Tries that failed so far. */
  attempts: number;
}

export interface AlertState {
  /** Breaches in a row, up to now. */
  streak: number;
  /** An alert was sent and no recovery since. */
  alerting: boolean;
}

/** Each version's statements, in order; the file's user_version says how many it has had. */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE runs (
     id INTEGER PRIMARY KEY,
     check_name TEXT NOT NULL,
     server TEXT NOT NULL,
     started_at INTEGER NOT NULL,
     duration_ms INTEGER NOT NULL,
     ok INTEGER NOT NULL,
     error TEXT,
     figures TEXT NOT NULL,
     breaches TEXT NOT NULL
   );
   CREATE INDEX runs_by_time ON runs (started_at);
   CREATE TABLE alert_state (
     check_name TEXT NOT NULL,
     server TEXT NOT NULL,
     streak INTEGER NOT NULL,
     alerting INTEGER NOT NULL,
     PRIMARY KEY (check_name, server)
   );`,
  // Version 2: results imported from the page's history file, told from the monitor's own runs
  // (they were never judged, so they set no known answer and count in no streak); and the figures
  // of each check's last run that met every expectation ("unchanged" compares with them), kept
  // apart from the runs so that deleting old runs never loses them.
  `ALTER TABLE runs ADD COLUMN source TEXT NOT NULL DEFAULT 'monitor';
   CREATE TABLE last_met (
     check_name TEXT NOT NULL,
     server TEXT NOT NULL,
     figures TEXT NOT NULL,
     PRIMARY KEY (check_name, server)
   );
   INSERT INTO last_met (check_name, server, figures)
     SELECT check_name, server, figures FROM runs
     WHERE id IN (SELECT max(id) FROM runs WHERE ok = 1 AND breaches = '[]' GROUP BY check_name, server);`,
  // Version 3: runs the server's rate limit refused, told from runs that failed (they count in no
  // streak); and the outbox, each notice not yet delivered to a target, so a notice pending when
  // the monitor stops is sent after the next start rather than lost (docs/monitor.md, "Alerts").
  `ALTER TABLE runs ADD COLUMN limited INTEGER NOT NULL DEFAULT 0;
   CREATE TABLE outbox (
     id INTEGER PRIMARY KEY,
     notice TEXT NOT NULL,
     target TEXT NOT NULL,
     attempts INTEGER NOT NULL DEFAULT 0
   );`,
  // Version 4: what a run measured against when its server is `auto` (the nearest, chosen at each
  // run; the streak stays the `auto` entry's), and the local address it was bound to (`source:`).
  `ALTER TABLE runs ADD COLUMN chosen TEXT;
   ALTER TABLE runs ADD COLUMN source_address TEXT;`,
  // Version 5: runs not run and why (paused, over the data budget, the link busy), the bytes each
  // run moved each way (the budget counts them), each outlet's cursor (the last run it delivered:
  // MQTT, InfluxDB), and the monitor's own settings that outlive a restart (a pause).
  `ALTER TABLE runs ADD COLUMN skipped TEXT;
   ALTER TABLE runs ADD COLUMN bytes_down INTEGER;
   ALTER TABLE runs ADD COLUMN bytes_up INTEGER;
   CREATE TABLE outlet_cursor (
     outlet TEXT PRIMARY KEY,
     after_id INTEGER NOT NULL
   );
   CREATE TABLE monitor_state (
     key TEXT PRIMARY KEY,
     value TEXT NOT NULL
   );`,
];

export class StoreError extends Error {}

/**
 * The history is the user's own: a folder the monitor makes is 0700, and the database 0600 before
 * SQLite opens it (its -wal and -shm take the database's mode; under the usual umask 022 all three
 * were 0644, readable by every user of the machine). A history from before is made private too; a
 * folder that was there already is left as it is (it may be shared, as /tmp is).
 */
function keepPrivate(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  if (!existsSync(path)) closeSync(openSync(path, 'wx', 0o600));
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    if (!existsSync(file) || (statSync(file).mode & 0o077) === 0) continue;
    try {
      chmodSync(file, 0o600);
    } catch {
      // A file system made read-only, or a file of another user's: SQLite's own open says what is wrong.
    }
  }
}

/** A judged run and what follows from it, recorded all at once (run-stages.ts, the record stage). */
interface RunWithConsequences {
  run: RunRecord;
  /** The streak and alert after it; none for a run that is judged not at all (limited). */
  state?: AlertState;
  /** Each notice it calls for, as JSON, with its target: kept in the outbox until delivered. */
  notices: readonly { notice: string; target: string }[];
  /** Runs that started before this (ms since the epoch) are deleted. */
  pruneBefore: number;
}

export interface Store {
  /** Records a run alone (an import, a suite's seed); the monitor's own runs go through recordRun. */
  addRun(run: RunRecord): void;
  /**
   * Records a run with its figures as the known ones when it met every expectation, the alert
   * state after it, its notices in the outbox and the pruning, in one transaction: all or none.
   * The outbox ids of the notices, in order.
   */
  recordRun(entry: RunWithConsequences): number[];
  /** Records imported runs in one transaction, each unless a run of its check and server started at the same time; how many were new. */
  importRuns(runs: readonly RunRecord[]): number;
  /** Runs, oldest first; `since` ms since the epoch. */
  runs(since?: number): RunRecord[];
  /** Deletes the runs that started before `beforeMs`; how many. */
  prune(beforeMs: number): number;
  /** The figures of the last run of the check against the server that met every expectation, if any. */
  lastMet(check: string, server: string): Record<string, unknown> | undefined;
  alertState(check: string, server: string): AlertState;
  /** Sets the alert state alone (a suite's seed); the monitor's runs set it through recordRun. */
  setAlertState(check: string, server: string, state: AlertState): void;
  /** The last `count` runs of the check against the server that were judged (the monitor's, not refused by a rate limit), newest first. */
  judgedRuns(check: string, server: string, count: number): RunRecord[];
  /** Keeps a notice for a target until it is delivered or given up; its id. */
  queueNotice(notice: string, target: string): number;
  /** Notes how many tries of a kept notice have failed. */
  noticeTried(id: number, attempts: number): void;
  /** Forgets a kept notice: delivered, or given up. */
  noticeDone(id: number): void;
  /** The notices kept, oldest first. */
  pendingNotices(): PendingNotice[];
  /** Up to `limit` runs recorded after the run `afterId` (0: from the first), in the order recorded, each with its id. */
  runsAfter(afterId: number, limit: number): NumberedRun[];
  /** The id of the last run recorded, 0 for none. */
  lastRunId(): number;
  /** Bytes the monitor's runs moved (both ways) since `sinceMs`, of one check or all. */
  bytesMovedSince(sinceMs: number, check?: string): number;
  /** The last run an outlet delivered (outlets/), or undefined for an outlet that never started. */
  outletCursor(outlet: string): number | undefined;
  setOutletCursor(outlet: string, afterId: number): void;
  /** A setting of the monitor's own that outlives a restart (a pause), or undefined; set to undefined to forget it. */
  stateValue(key: string): string | undefined;
  setStateValue(key: string, value: string | undefined): void;
  close(): void;
}

/** The statements the history runs, prepared once. */
function prepared(db: SqliteDatabase) {
  return {
    insert: db.prepare('INSERT INTO runs (check_name, server, started_at, duration_ms, ok, error, figures, breaches, source, limited, chosen, source_address, skipped, bytes_down, bytes_up) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)'),
    exists: db.prepare('SELECT 1 FROM runs WHERE check_name = ? AND server = ? AND started_at = ? LIMIT 1'),
    select: db.prepare('SELECT id, check_name, server, started_at, duration_ms, ok, error, figures, breaches, source, limited, chosen, source_address, skipped, bytes_down, bytes_up FROM runs WHERE started_at >= ? ORDER BY started_at, id'),
    selectJudged: db.prepare("SELECT id, check_name, server, started_at, duration_ms, ok, error, figures, breaches, source, limited, chosen, source_address, skipped, bytes_down, bytes_up FROM runs WHERE check_name = ? AND server = ? AND source = 'monitor' AND limited = 0 AND skipped IS NULL ORDER BY started_at DESC, id DESC LIMIT ?"),
    queue: db.prepare('INSERT INTO outbox (notice, target, attempts) VALUES (?, ?, 0) RETURNING id'),
    tried: db.prepare('UPDATE outbox SET attempts = ? WHERE id = ?'),
    done: db.prepare('DELETE FROM outbox WHERE id = ?'),
    pending: db.prepare('SELECT id, notice, target, attempts FROM outbox ORDER BY id'),
    selectMet: db.prepare('SELECT figures FROM last_met WHERE check_name = ? AND server = ?'),
    putMet: db.prepare('INSERT INTO last_met (check_name, server, figures) VALUES (?, ?, ?) ON CONFLICT (check_name, server) DO UPDATE SET figures = excluded.figures'),
    deleteBefore: db.prepare('DELETE FROM runs WHERE started_at < ?'),
    selectAfter: db.prepare('SELECT id, check_name, server, started_at, duration_ms, ok, error, figures, breaches, source, limited, chosen, source_address, skipped, bytes_down, bytes_up FROM runs WHERE id > ? ORDER BY id LIMIT ?'),
    lastId: db.prepare('SELECT coalesce(max(id), 0) AS id FROM runs'),
    movedSince: db.prepare("SELECT coalesce(sum(coalesce(bytes_down, 0) + coalesce(bytes_up, 0)), 0) AS bytes FROM runs WHERE started_at >= ? AND source = 'monitor' AND (? IS NULL OR check_name = ?)"),
    getCursor: db.prepare('SELECT after_id FROM outlet_cursor WHERE outlet = ?'),
    putCursor: db.prepare('INSERT INTO outlet_cursor (outlet, after_id) VALUES (?, ?) ON CONFLICT (outlet) DO UPDATE SET after_id = excluded.after_id'),
    getValue: db.prepare('SELECT value FROM monitor_state WHERE key = ?'),
    putValue: db.prepare('INSERT INTO monitor_state (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value'),
    deleteValue: db.prepare('DELETE FROM monitor_state WHERE key = ?'),
    getState: db.prepare('SELECT streak, alerting FROM alert_state WHERE check_name = ? AND server = ?'),
    putState: db.prepare('INSERT INTO alert_state (check_name, server, streak, alerting) VALUES (?, ?, ?, ?) ON CONFLICT (check_name, server) DO UPDATE SET streak = excluded.streak, alerting = excluded.alerting'),
  };
}

/** A row of `runs` as the statements read it. */
// A type, not an interface: a statement's rows (Record<string, SQLOutputValue>) convert to it.
type RunRow = { id: number | bigint; check_name: string; server: string; started_at: number; duration_ms: number; ok: number; error: string | null; figures: string; breaches: string; source: string; limited: number; chosen: string | null; source_address: string | null; skipped: string | null; bytes_down: number | null; bytes_up: number | null };

const runOfRow = (row: RunRow): RunRecord => ({
  check: row.check_name,
  server: row.server,
  startedAt: row.started_at,
  durationMs: row.duration_ms,
  ok: row.ok === 1,
  error: row.error,
  figures: JSON.parse(row.figures) as Record<string, unknown>,
  breaches: JSON.parse(row.breaches) as string[],
  source: row.source === 'import' ? 'import' : 'monitor',
  limited: row.limited === 1,
  chosen: row.chosen,
  sourceAddress: row.source_address,
  // Left out when null, as a run recorded before version 5 has them.
  ...(row.skipped === null ? {} : { skipped: row.skipped }),
  ...(row.bytes_down === null ? {} : { bytesDown: row.bytes_down }),
  ...(row.bytes_up === null ? {} : { bytesUp: row.bytes_up }),
});

/** Opens (creating when missing) and migrates the history at `path`, with `driver` or this Node's (sqlite-driver.ts). */
export async function openStore(path: string, driver?: SqliteDriverName): Promise<Store> {
  let db: SqliteDatabase | undefined;
  try {
    keepPrivate(path);
    db = await openSqlite(path, driver ?? (await defaultSqliteDriver()));
    migrate(db);
    // Prepared here, so a file whose tables are not the schema its version says (another
    // program's, or damaged) is said as a history that cannot be opened, not as a bare SQL error.
    return storeOver(db, path, prepared(db));
  } catch (err) {
    // Closed, so a file that could not be taken is not held open (nor its file system busy).
    if (db?.isOpen === true) db.close();
    // A driver that cannot load is said as such: no folder is at fault.
    const where = err instanceof SqliteDriverError ? '' : unwritable(path);
    throw new StoreError(`cannot open the history ${path}: ${err instanceof Error ? err.message : String(err)}${where}`);
  }
}

/** `fn` in one transaction of `db`, committed whole or rolled back whole. */
function transaction<T>(db: SqliteDatabase, fn: () => T): T {
  db.exec('BEGIN IMMEDIATE');
  try {
    const result = fn();
    db.exec('COMMIT');
    return result;
  } catch (err) {
    rollback(db);
    throw err;
  }
}

/** The history open at `path`, through its prepared statements. */
function storeOver(db: SqliteDatabase, path: string, statements: ReturnType<typeof prepared>): Store {
  const { insert, exists, select, selectJudged, queue, tried, done, pending, selectMet, putMet, deleteBefore, getState, putState } = statements;
  const write = <T>(what: string, fn: () => T): T => {
    try {
      return fn();
    } catch (err) {
      // A full disk, a file made read-only or removed: said, with the file, never a lost run unsaid.
      throw new StoreError(`cannot ${what} in the history ${path}: ${err instanceof Error ? err.message : String(err)}`);
    }
  };
  const insertRun = (r: RunRecord) => insert.run(r.check, r.server, r.startedAt, Math.round(r.durationMs), r.ok ? 1 : 0, r.error, JSON.stringify(r.figures), JSON.stringify(r.breaches), r.source ?? 'monitor', r.limited === true ? 1 : 0, r.chosen ?? null, r.sourceAddress ?? null, r.skipped ?? null, r.bytesDown ?? null, r.bytesUp ?? null);
  /** The run and, when it met every expectation, its figures as the known ones. */
  const putRun = (r: RunRecord) => {
    insertRun(r);
    if (r.ok && r.breaches.length === 0 && (r.source ?? 'monitor') === 'monitor') putMet.run(r.check, r.server, JSON.stringify(r.figures));
  };
  return {
    addRun: (r) => {
      write('record a run', () => {
        transaction(db, () => {
          putRun(r);
        });
      });
    },
    recordRun: ({ run, state, notices, pruneBefore }) =>
      write('record a run', () =>
        transaction(db, () => {
          putRun(run);
          if (state !== undefined) putState.run(run.check, run.server, state.streak, state.alerting ? 1 : 0);
          const ids = notices.map(({ notice, target }) => Number((queue.get(notice, target) as { id: number | bigint }).id));
          deleteBefore.run(pruneBefore);
          return ids;
        }),
      ),
    importRuns: (runs) =>
      write('import runs', () =>
        transaction(db, () => {
          let added = 0;
          for (const r of runs) {
            // Checked row by row, so a file that holds one result twice adds it once.
            if (exists.get(r.check, r.server, r.startedAt) !== undefined) continue;
            insertRun({ ...r, source: 'import' });
            added++;
          }
          return added;
        }),
      ),
    runs: (since = 0) => (select.all(since) as RunRow[]).map(runOfRow),
    judgedRuns: (check, server, count) => (selectJudged.all(check, server, count) as RunRow[]).map(runOfRow),
    queueNotice: (notice, target) => write('keep a notice', () => Number((queue.get(notice, target) as { id: number | bigint }).id)),
    noticeTried: (id, attempts) => {
      write('note a try of a notice', () => tried.run(attempts, id));
    },
    noticeDone: (id) => {
      write('forget a delivered notice', () => done.run(id));
    },
    pendingNotices: () => (pending.all() as { id: number | bigint; notice: string; target: string; attempts: number }[]).map((row) => ({ ...row, id: Number(row.id) })),
    lastMet: (check, server) => {
      const row = selectMet.get(check, server) as { figures: string } | undefined;
      return row === undefined ? undefined : (JSON.parse(row.figures) as Record<string, unknown>);
    },
    prune: (beforeMs) => Number(write('delete old runs', () => deleteBefore.run(beforeMs)).changes),
    alertState: (check, server) => {
      const row = getState.get(check, server) as { streak: number; alerting: number } | undefined;
      return { streak: row?.streak ?? 0, alerting: row?.alerting === 1 };
    },
    setAlertState: (check, server, state) => {
      write('record the alert state', () => putState.run(check, server, state.streak, state.alerting ? 1 : 0));
    },
    ...outletsAndState(statements, write),
    close: () => {
      db.close();
    },
  };
}

/** What the outlets, the budget and a pause read and keep in the history (outlets/, gates/). */
function outletsAndState(statements: ReturnType<typeof prepared>, write: <T>(what: string, fn: () => T) => T): Pick<Store, 'runsAfter' | 'lastRunId' | 'bytesMovedSince' | 'outletCursor' | 'setOutletCursor' | 'stateValue' | 'setStateValue'> {
  const { selectAfter, lastId, movedSince, getCursor, putCursor, getValue, putValue, deleteValue } = statements;
  return {
    runsAfter: (afterId, limit) => (selectAfter.all(afterId, limit) as RunRow[]).map((row) => ({ ...runOfRow(row), id: Number(row.id) })),
    lastRunId: () => Number((lastId.get() as { id: number | bigint }).id),
    bytesMovedSince: (sinceMs, check) => Number((movedSince.get(sinceMs, check ?? null, check ?? null) as { bytes: number | bigint }).bytes),
    outletCursor: (outlet) => {
      const row = getCursor.get(outlet) as { after_id: number | bigint } | undefined;
      return row === undefined ? undefined : Number(row.after_id);
    },
    setOutletCursor: (outlet, afterId) => {
      write('note what an outlet delivered', () => putCursor.run(outlet, afterId));
    },
    stateValue: (key) => (getValue.get(key) as { value: string } | undefined)?.value,
    setStateValue: (key, value) => {
      write('record the monitor\'s state', () => (value === undefined ? deleteValue.run(key) : putValue.run(key, value)));
    },
  };
}

/**
 * Why the history's folder cannot be written, in words to add to SQLite's own ("unable to open
 * database file" says nothing of a read-only file system), or nothing when it can.
 */
function unwritable(path: string): string {
  try {
    accessSync(dirname(path), constants.W_OK);
    return '';
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EROFS') return ` (${dirname(path)} is on a read-only file system)`;
    if (code === 'EACCES') return ` (${dirname(path)} is not writable by this user)`;
    return '';
  }
}

/** Rolls back the transaction under way, if SQLite has not already (a full disk ends it itself): the fault's own words stay the ones said. */
function rollback(db: SqliteDatabase): void {
  if (db.isTransaction) db.exec('ROLLBACK');
}

function migrate(db: SqliteDatabase): void {
  const version = (db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version;
  if (version > MIGRATIONS.length) throw new Error(`its schema is version ${String(version)}, newer than this netdiag knows (${String(MIGRATIONS.length)}): a newer netdiag wrote it`);
  for (let v = version; v < MIGRATIONS.length; v++) {
    db.exec('BEGIN IMMEDIATE');
    try {
      db.exec(MIGRATIONS[v] ?? '');
      db.exec(`PRAGMA user_version = ${String(v + 1)}`);
      db.exec('COMMIT');
    } catch (err) {
      rollback(db);
      throw err;
    }
  }
}
