// The monitor's history file: created and migrated, kept across opens, a newer schema refused
// rather than misread, old runs pruned, and a file that cannot be made or written (a full disk)
// said with its path, with every run committed before kept.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore, StoreError, type RunRecord } from './store.js';

const dir = mkdtempSync(join(tmpdir(), 'netdiag-store-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const run = (startedAt: number, ok = true): RunRecord => ({ check: 'speed', server: 'http://a', startedAt, durationMs: 1000, ok, error: ok ? null : 'down', figures: ok ? { download_mbps: 93.5 } : {}, breaches: ok ? [] : ['the check did not run: down'] });

describe("the monitor's history", () => {
  it('creates a WAL file at schema version 1, in a folder it makes, and keeps runs and alert state across opens', async () => {
    const path = join(dir, 'deep', 'er', 'monitor.db');
    const store = await openStore(path);
    store.addRun(run(1000));
    store.addRun(run(2000, false));
    store.setAlertState('speed', 'http://a', { streak: 1, alerting: false });
    store.close();
    const raw = new DatabaseSync(path, { readOnly: true });
    expect(raw.prepare('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'wal' });
    expect(raw.prepare('PRAGMA user_version').get()).toEqual({ user_version: 1 });
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

  it('refuses a file a newer netdiag wrote, saying so, and leaves it as it was', async () => {
    const path = join(dir, 'newer.db');
    const raw = new DatabaseSync(path);
    raw.exec('PRAGMA user_version = 7');
    raw.close();
    await expect(openStore(path)).rejects.toThrow(new StoreError(`cannot open the history ${path}: its schema is version 7, newer than this netdiag knows (1): a newer netdiag wrote it`));
    const after = new DatabaseSync(path, { readOnly: true });
    expect(after.prepare('PRAGMA user_version').get()).toEqual({ user_version: 7 });
    after.close();
  });

  it('says which file it could not open when its folder cannot be made', async () => {
    const blocked = join(dir, 'blocked');
    // A file where the folder should be.
    writeFileSync(blocked, 'not a folder');
    await expect(openStore(join(blocked, 'monitor.db'))).rejects.toThrow(/^cannot open the history .*blocked\/monitor\.db: /);
  });

  // A full disk: a 128 kB tmpfs, which needs root to mount (CI runs as root).
  it.skipIf(process.getuid?.() !== 0)('says which file it could not write when the disk is full, and keeps every run it had committed', async () => {
    const mount = join(dir, 'tiny');
    mkdirSync(mount);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=128k', 'tmpfs', mount]);
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
