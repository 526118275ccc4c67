// The SQLite the monitor's history is written with (docs/monitor.md, "History"): Node's built-in
// node:sqlite where this Node has it (22.13 and newer), else SQLite compiled to WebAssembly
// (node-sqlite3-wasm), whose file system layer is Node's fs, so the history works on the Node 20
// the client package allows. Both are SQLite 3 on the same file format; this file presents the
// part of them the store uses, and each driver sets the journal it can keep durable.
import { existsSync } from 'node:fs';
import type { DatabaseSync, StatementSync } from 'node:sqlite';

export type SqliteDriverName = 'node:sqlite' | 'node-sqlite3-wasm';

/** A value SQLite stores: what both drivers bind and return. */
type SqlValue = null | number | bigint | string | Uint8Array;

interface SqliteStatement {
  run(...params: SqlValue[]): { changes: number | bigint };
  /** The first row, or undefined when there is none. */
  get(...params: SqlValue[]): Record<string, unknown> | undefined;
  all(...params: SqlValue[]): Record<string, unknown>[];
}

export interface SqliteDatabase {
  readonly driver: SqliteDriverName;
  exec(sql: string): void;
  prepare(sql: string): SqliteStatement;
  close(): void;
  readonly isOpen: boolean;
  readonly isTransaction: boolean;
}

/** A driver that could not be loaded: said with its name, never passed over for the other. */
export class SqliteDriverError extends Error {}

/** Both drivers wait this long for a lock another process holds (SQLite's busy handler). */
const BUSY_TIMEOUT_MS = 5000;

/**
 * The driver this Node uses: node:sqlite when it loads without a flag, else node-sqlite3-wasm. Only
 * "no such built-in module" (Node 20, or 22 before 22.13 without --experimental-sqlite) chooses the
 * WebAssembly one; node:sqlite failing in any other way is a fault, said.
 */
export async function defaultSqliteDriver(): Promise<SqliteDriverName> {
  try {
    await quietly(() => import('node:sqlite'));
    return 'node:sqlite';
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_UNKNOWN_BUILTIN_MODULE') return 'node-sqlite3-wasm';
    throw new SqliteDriverError(`node:sqlite could not be loaded: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** Opens (creating when missing) the database at `path` with `driver`, its journal set for durability. */
export async function openSqlite(path: string, driver: SqliteDriverName): Promise<SqliteDatabase> {
  return driver === 'node:sqlite' ? openNative(path) : openWasm(path);
}

/**
 * node:sqlite: write-ahead logging with full sync, so a transaction is on disk once COMMIT
 * returns, and `monitor history` reads while the monitor writes (https://sqlite.org/wal.html §2).
 */
async function openNative(path: string): Promise<SqliteDatabase> {
  const { DatabaseSync: Database } = await quietly(() => import('node:sqlite'));
  const db: DatabaseSync = new Database(path);
  try {
    db.exec(`PRAGMA busy_timeout = ${String(BUSY_TIMEOUT_MS)}; PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;`);
  } catch (err) {
    db.close();
    throw err;
  }
  const statement = (s: StatementSync): SqliteStatement => ({
    run: (...params) => s.run(...params),
    get: (...params) => s.get(...params),
    all: (...params) => s.all(...params),
  });
  return {
    driver: 'node:sqlite',
    exec: (sql) => {
      db.exec(sql);
    },
    prepare: (sql) => statement(db.prepare(sql)),
    close: () => {
      db.close();
    },
    get isOpen() {
      return db.isOpen;
    },
    get isTransaction() {
      return db.isTransaction;
    },
  };
}

type WasmModule = typeof import('node-sqlite3-wasm');
type WasmDatabase = InstanceType<WasmModule['Database']>;
type WasmStatement = ReturnType<WasmDatabase['prepare']>;

/**
 * node-sqlite3-wasm, loaded on first use (it compiles its 1.3 MB of WebAssembly when loaded). Its
 * file layer has no shared memory, so write-ahead logging works there only in exclusive locking
 * mode, which would hold the history for the monitor's whole life (https://sqlite.org/wal.html §8):
 * it keeps a rollback journal with full sync instead, as durable per transaction.
 */
async function openWasm(path: string): Promise<SqliteDatabase> {
  let wasm: WasmModule;
  try {
    // Its CommonJS module object: its exports are set at run time, which an import by name misses.
    wasm = (await import('node-sqlite3-wasm')).default;
  } catch (err) {
    throw new SqliteDriverError(`node-sqlite3-wasm (SQLite for a Node without node:sqlite) could not be loaded: ${err instanceof Error ? err.message : String(err)}`);
  }
  const said = lockSaid(path);
  const db = said(() => new wasm.Database(path));
  try {
    said(() => {
      // A file node:sqlite wrote is in WAL mode, which this file layer can open only exclusively:
      // taken so for the moment it takes to replay its log and turn it into a rollback journal.
      db.exec(`PRAGMA busy_timeout = ${String(BUSY_TIMEOUT_MS)}; PRAGMA locking_mode = EXCLUSIVE; PRAGMA journal_mode = DELETE; PRAGMA locking_mode = NORMAL; PRAGMA synchronous = FULL;`);
      // The exclusive lock goes at the first read after NORMAL (https://sqlite.org/pragma.html#pragma_locking_mode).
      db.get('SELECT 1 FROM sqlite_schema LIMIT 1');
    });
  } catch (err) {
    db.close();
    throw err;
  }
  // Its statements hold WebAssembly memory until finalized; closing the database does not.
  const statements: WasmStatement[] = [];
  const statement = (s: WasmStatement): SqliteStatement => ({
    run: (...params) => said(() => s.run(params)),
    get: (...params) => said(() => (s.get(params) as Record<string, unknown> | null) ?? undefined),
    all: (...params) => said(() => s.all(params) as Record<string, unknown>[]),
  });
  return {
    driver: 'node-sqlite3-wasm',
    exec: (sql) => {
      said(() => {
        db.exec(sql);
      });
    },
    prepare: (sql) => {
      const s = said(() => db.prepare(sql));
      statements.push(s);
      return statement(s);
    },
    close: () => {
      for (const s of statements.splice(0)) if (!s.isFinalized) s.finalize();
      db.close();
    },
    get isOpen() {
      return db.isOpen;
    },
    get isTransaction() {
      return db.inTransaction;
    },
  };
}

/**
 * node-sqlite3-wasm locks a database by making the folder `<path>.lock` (its file layer has no
 * POSIX locks), held for one transaction; a process killed inside one leaves it, and every later
 * open waits out the busy timeout and fails. Its "database is locked" then names the folder and
 * what to do. Runs `fn` so.
 */
function lockSaid(path: string) {
  return <T>(fn: () => T): T => {
    try {
      return fn();
    } catch (err) {
      if (!(err instanceof Error) || !/database is locked/.test(err.message) || !existsSync(`${path}.lock`)) throw err;
      throw new Error(`${err.message} (node-sqlite3-wasm locks it with the folder ${path}.lock: another netdiag is using the history, or one was stopped while writing; if no netdiag is running, remove that folder)`);
    }
  };
}

/**
 * Loads node:sqlite without its "SQLite is an experimental feature" warning, which Node 22 prints
 * on loading it: it speaks of how the history is kept, not of anything the person did, and would
 * end up in every `netdiag monitor` log. Any other warning passes.
 */
async function quietly<T>(load: () => Promise<T>): Promise<T> {
  const emit = process.emitWarning.bind(process);
  process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
    if (/SQLite is an experimental feature/.test(typeof warning === 'string' ? warning : warning.message)) return;
    (emit as (...args: unknown[]) => void)(warning, ...rest);
  });
  try {
    return await load();
  } finally {
    process.emitWarning = emit;
  }
}
