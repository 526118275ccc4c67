// The data budget's gate against a real history (SQLite in a temp folder): the bytes in the
// window and the check's last run's bytes decide; a run older than the window, another check's
// runs (for a check's own budget) and skipped runs do not count; the log warns once at 80%.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseMonitorConfig } from '../monitor-config.js';
import { openStore, type RunRecord, type Store } from '../store.js';
import { budgetGate, budgetsLeft } from './budget.js';

const SERVER = 'http://a';
const DAY = 86_400_000;

/** A configuration with a speedtest check and an rpm check, and the budget lines given. */
const configWith = (top: string | null, onSpeed: string | null) =>
  parseMonitorConfig(
    `servers: [${SERVER}]\nchecks:\n  - name: speed\n    run: speedtest\n    every: 1h\n${onSpeed === null ? '' : `    budget: ${onSpeed}\n`}  - name: rpm\n    run: rpm\n    every: 1h\n${top === null ? '' : `budget: ${top}\n`}`,
    'monitor.yaml',
    '/unused.db',
  );

const ran = (check: string, daysAgo: number, down: number, up: number): RunRecord => ({ check, server: SERVER, startedAt: Date.now() - daysAgo * DAY, durationMs: 1000, ok: true, error: null, figures: {}, breaches: [], bytesDown: down, bytesUp: up });

describe('the data budget gate', () => {
  let dir: string;
  let store: Store;
  const lines: string[] = [];
  const gateFor = (config: ReturnType<typeof configWith>) => budgetGate({ store: () => store, config: () => config, log: (line) => lines.push(line) });
  const checkNamed = (config: ReturnType<typeof configWith>, name: string) => {
    const check = config.checks.find((c) => c.name === name);
    if (check === undefined) throw new Error(`no check ${name}`);
    return check;
  };

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'netdiag-budget-'));
    store = await openStore(join(dir, 'monitor.db'));
    lines.length = 0;
  });
  afterEach(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("skips a run whose check's last run would pass what is left, counting only the window's runs; a check with no run yet runs", async () => {
    const config = configWith('10 GB per 30 days', null);
    // Outside the window: not counted.
    store.addRun(ran('speed', 31, 9e9, 0));
    store.addRun(ran('speed', 2, 2.5e9, 1e9));
    store.addRun(ran('speed', 1, 2.5e9, 1e9));
    const gate = gateFor(config);
    expect(await gate(checkNamed(config, 'speed'), SERVER)).toBe("the budget 10 GB per 30 days has 3.0 GB left; this check's last run moved 3.5 GB");
    // The rpm check has no run to go by: it runs.
    expect(await gate(checkNamed(config, 'rpm'), SERVER)).toBeUndefined();
    expect(budgetsLeft(store, config, Date.now())).toEqual([{ check: null, budget: config.budget, usedBytes: 7e9, remainingBytes: 3e9 }]);
  });

  it("lets the run go when its last run fits what is left, and goes by the last run that moved bytes, not a skipped one", async () => {
    const config = configWith('10 GB per 30 days', null);
    store.addRun(ran('speed', 2, 4e9, 0));
    store.addRun(ran('speed', 1, 2e9, 1e9));
    store.addRun({ ...ran('speed', 0.5, 0, 0), ok: false, error: 'skipped', skipped: 'paused until then', bytesDown: null, bytesUp: null });
    expect(await gateFor(config)(checkNamed(config, 'speed'), SERVER)).toBeUndefined();
  });

  it("holds a check to its own budget with its own runs only, and says when nothing is left", async () => {
    const config = configWith(null, '2 GiB per 7 days');
    store.addRun(ran('rpm', 1, 50e9, 50e9));
    store.addRun(ran('speed', 1, 2 ** 31, 0));
    const gate = gateFor(config);
    expect(await gate(checkNamed(config, 'speed'), SERVER)).toBe("this check's budget 2 GiB per 7 days has 0 B left; it runs again once older runs leave the window");
    expect(await gate(checkNamed(config, 'rpm'), SERVER)).toBeUndefined();
  });

  it('warns in the log once when a budget crosses 80%, and again only after it fell below', async () => {
    const config = configWith('10 GB per 30 days', null);
    store.addRun(ran('speed', 1, 7e9, 0));
    const gate = gateFor(config);
    await gate(checkNamed(config, 'rpm'), SERVER);
    expect(lines).toEqual([]);
    store.addRun(ran('speed', 0.5, 1e9, 0.5e9));
    await gate(checkNamed(config, 'rpm'), SERVER);
    await gate(checkNamed(config, 'speed'), SERVER);
    expect(lines).toEqual(['the data budget 10 GB per 30 days is 85% used: 8.5 GB moved in the window, 1.5 GB left; a run that would pass it is skipped']);
    // A larger budget after a reload: below 80% again, and a later crossing is said anew.
    const larger = configWith('20 GB per 30 days', null);
    await gateFor(larger)(checkNamed(larger, 'rpm'), SERVER);
    store.addRun(ran('speed', 0.25, 8e9, 0));
    await gateFor(larger)(checkNamed(larger, 'rpm'), SERVER);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toBe('the data budget 20 GB per 30 days is 82% used: 16.5 GB moved in the window, 3.5 GB left; a run that would pass it is skipped');
  });
});
