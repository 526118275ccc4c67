// `servers: [URL, auto]` in a running monitor: the built monitor against a real netdiag server
// that lists three real servers held 5, 30 and 80 ms away (test/cli/delayed-deployment.ts); each
// `auto` run chooses afresh, and the history records what it chose and the check's source.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDelayedDeployment, type DelayedDeployment } from '../cli/delayed-deployment.js';
import { runLinesOf, startMonitor, until } from '../support/monitor-process.js';
import { runCli } from '../support/process.js';

interface HistoryRun {
  check: string;
  server: string;
  ok: boolean;
  chosen: string | null;
  source_address: string | null;
}

describe('a monitor with servers: [URL, auto]', () => {
  let near: DelayedDeployment;
  let mid: DelayedDeployment;
  let far: DelayedDeployment;
  let list: DelayedDeployment;
  const dir = mkdtempSync(join(tmpdir(), 'netdiag-auto-'));

  beforeAll(async () => {
    [near, mid, far] = await Promise.all([startDelayedDeployment(5), startDelayedDeployment(30), startDelayedDeployment(80)]);
    const entry = (name: string, url: string) => ({ name, url, location: name, families: ['ipv4'] });
    list = await startDelayedDeployment(0, { NETDIAG_SERVERS: JSON.stringify([entry('far', far.url), entry('mid', mid.url), entry('near', near.url)]) });
  }, 30_000);
  afterAll(async () => {
    await Promise.all([near.close(), mid.close(), far.close(), list.close()]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('chooses the nearest at each auto run, and records it and the source with the run', async () => {
    const config = join(dir, 'monitor.yaml');
    writeFileSync(config, [`servers: [${list.url}, auto]`, `database: ${join(dir, 'monitor.db')}`, 'listen: off', 'checks:', '  - name: round trip', '    run: latency', '    cron: "* * * * * *"', '    spread: 0s', '    source: 127.0.0.2', ''].join('\n'));
    const monitor = startMonitor(config);
    const autoRuns = () => runLinesOf(monitor.lines, 'round trip').filter((l) => l.includes(' on auto '));
    try {
      await until('two auto runs', () => autoRuns().length >= 2, 30_000, monitor.lines);
    } finally {
      monitor.child.kill('SIGTERM');
    }
    await new Promise((resolve) => monitor.child.once('close', resolve));
    expect(autoRuns()[0]).toContain(`round trip on auto (${near.url}): `);
    const history = await runCli(['monitor', 'history', '--json', '--config', config]);
    expect(history.code, history.stderr).toBe(0);
    const runs = JSON.parse(history.stdout) as HistoryRun[];
    const auto = runs.filter((r) => r.server === 'auto');
    expect(auto.length).toBeGreaterThanOrEqual(2);
    for (const r of auto) expect(r).toMatchObject({ ok: true, chosen: near.url, source_address: '127.0.0.2' });
    for (const r of runs.filter((r) => r.server !== 'auto')) expect(r).toMatchObject({ server: list.url, chosen: null, source_address: '127.0.0.2' });
    // Chosen afresh at each run: every auto run timed every listed server.
    expect(mid.paths().filter((p) => p === '/__down?bytes=0').length).toBeGreaterThanOrEqual(5 * auto.length);
    // The list asked, the servers timed and the runs made from the check's source, every one.
    const fromElsewhere = [list, near, mid, far].flatMap((d) => d.asked()).filter((a) => !a.startsWith('127.0.0.2 '));
    expect(fromElsewhere).toEqual([]);
    expect(list.asked().some((a) => a === '127.0.0.2 /v1/servers')).toBe(true);
  }, 60_000);
});
