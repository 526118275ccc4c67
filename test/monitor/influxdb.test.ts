// The monitor's InfluxDB outlet against Debian's influxd 1.x (docs/monitor.md, "InfluxDB"): each run
// written as a point with its tags and fields, read back through /query; a run recorded while the
// server is down arrives once it is back; the history kept before the outlet started is written by
// `monitor influxdb-backfill` once; `monitor export --influx` is line protocol influxd reads back with
// every name intact; a point refused for good (a field-type conflict) is passed over, a missing
// database is not.
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { influxdbOutlet } from '../../src/cli/monitor/outlets/influxdb.js';
import { openStore, type NumberedRun, type RunRecord } from '../../src/cli/monitor/store.js';
import { startInfluxd, type Influxd, type Row } from '../support/influxdb.js';
import { runLinesOf, startMonitor, until } from '../support/monitor-process.js';
import { runCli } from '../support/process.js';
import { LOOPBACK_TRANSFERS, startTestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';

const ready = requireCommands("the monitor's InfluxDB outlet", ['influxd'], 'influxdb');

/** A check name with every character line protocol escapes in a tag: spaces, a comma, an equals sign. */
const CHECK = 'line speed, upstairs = 2';
const OLDER = 'older, speed';
const DAY = 86_400_000;
/** The backfill reads the whole configuration, whose check runs each second for the monitor started below. */
const EVERY_SECOND = { NETDIAG_MONITOR_MIN_INTERVAL: '1s' };
/** A time `days` before now, whole ms. */
const daysAgo = (days: number) => Math.round(Date.now() - days * DAY);

/** The runs of the history before the outlet started: an ok one bound to a source, a failed one, a skipped one. */
function olderRuns(server: string): RunRecord[] {
  return [
    { check: OLDER, server, startedAt: daysAgo(3), durationMs: 5012, ok: true, error: null, figures: { download_mbps: 91.5, upload_mbps: 18, bufferbloat_grade: 'B', mode: 'light' }, breaches: [], sourceAddress: '192.0.2.7', bytesDown: 123_456, bytesUp: 7_890 },
    { check: OLDER, server, startedAt: daysAgo(2), durationMs: 40, ok: false, error: 'connection refused', figures: {}, breaches: ['the check did not run: connection refused'] },
    { check: OLDER, server, startedAt: daysAgo(1), durationMs: 0, ok: false, error: 'paused until 2026-12-06T22:00:00Z', skipped: 'paused until 2026-12-06T22:00:00Z', figures: {}, breaches: [] },
  ];
}

/** What a point of `run` reads back as, by the documented mapping: tags check, outcome, server, source; numeric figures, bytes and duration as fields. */
function expectedRow(run: RunRecord): Record<string, unknown> {
  const numbers = Object.fromEntries(Object.entries(run.figures).filter(([, v]) => typeof v === 'number'));
  const outcome = typeof run.skipped === 'string' ? 'skipped' : run.ok ? 'ok' : 'failed';
  return { time: run.startedAt, check: run.check, server: run.server, source: run.sourceAddress ?? null, outcome, ...numbers, bytes_down: run.bytesDown ?? null, bytes_up: run.bytesUp ?? null, duration_ms: run.durationMs };
}

/** A row's tags and fields as written (a column of a field or tag another point has, but not this one, is null). */
const pointOf = (row: Row, keys: readonly string[]) => Object.fromEntries(keys.map((k) => [k, row[k] ?? null]));

/** Resolves once `read` gives at least `count` rows, polling every 200 ms; rejects naming `what` after 20 s. */
async function untilRows(what: string, read: () => Promise<Row[]>, count: number, lines: readonly string[]): Promise<void> {
  const end = Date.now() + 20_000;
  while ((await read()).length < count) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${lines.slice(-5).join(' | ')}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe.skipIf(!ready)("the monitor's InfluxDB outlet, against influxd", () => {
  const dir = mkdtempSync(join(tmpdir(), 'netdiag-monitor-influxdb-'));
  let influxd: Influxd;

  beforeAll(async () => {
    influxd = await startInfluxd();
  });
  afterAll(async () => {
    await influxd.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const rowsOf = (check: string, db: string) => influxd.query(`SELECT * FROM netdiag_monitor WHERE "check" = '${check}' ORDER BY time`, db);

  it('writes each run as documented; a run while influxd is down arrives once it is back; the backfill writes the older history once', async () => {
    await influxd.query('CREATE DATABASE netdiag');
    const server = await startTestServer({ NETDIAG_EVENTS_SINK: 'none', NETDIAG_RATE_LIMITS: 'speedtest=100000,ip=100000', ...LOOPBACK_TRANSFERS });
    const database = join(dir, 'monitor.db');
    const seed = await openStore(database);
    const older = olderRuns(server.url);
    for (const run of older) seed.addRun(run);
    seed.close();
    const config = join(dir, 'monitor.yaml');
    writeFileSync(config, [`servers: [${server.url}]`, `database: ${database}`, 'listen: off', 'checks:', `  - name: "${CHECK}"`, '    run: latency', '    source: 127.0.0.1', '    cron: "* * * * * *"', '    spread: 0s', 'influxdb:', `  url: ${influxd.url}`, '  database: netdiag', ''].join('\n'));

    const monitor = startMonitor(config);
    let down = 0;
    let up = 0;
    try {
      await untilRows('two runs written to influxd', () => rowsOf(CHECK, 'netdiag'), 2, monitor.lines);
      down = Date.now();
      await influxd.stop();
      const before = runLinesOf(monitor.lines, CHECK).length;
      await until('a run while influxd is down, and the write said failing', () => runLinesOf(monitor.lines, CHECK).length > before && monitor.lines.some((l) => l.startsWith('netdiag monitor: influxdb: cannot deliver (no answer from')), 20_000, monitor.lines);
      await influxd.start();
      up = Date.now();
      await until('the outlet delivering again', () => monitor.lines.includes('netdiag monitor: influxdb: delivering again'), 20_000, monitor.lines);
    } finally {
      monitor.child.kill('SIGTERM');
      await once(monitor.child, 'exit');
      await server.close();
    }

    const store = await openStore(database);
    const cursor = store.outletCursor('influxdb') ?? 0;
    const history = store.runsAfter(0, 1000);
    store.close();
    const delivered = history.filter((r) => r.check === CHECK && r.id <= cursor);
    const whileDown = delivered.filter((r) => r.startedAt >= down && r.startedAt <= up);
    expect(whileDown.length).toBeGreaterThan(0);
    const keys = ['time', 'check', 'server', 'source', 'outcome', 'client_to_api_rtt_ms', 'edge_to_region_rtt_ms', 'bytes_down', 'bytes_up', 'duration_ms'];
    const rows = await rowsOf(CHECK, 'netdiag');
    // Every run the outlet reached, the one recorded while influxd was down among them, and no other.
    expect(rows.map((row) => pointOf(row, keys))).toEqual(delivered.map((r) => pointOf({ measurement: 'netdiag_monitor', ...expectedRow(r) }, keys)));
    expect(rows.every((row) => row.source === '127.0.0.1' && row.outcome === 'ok' && typeof row.client_to_api_rtt_ms === 'number')).toBe(true);

    // The outlet began at the last run recorded when it first started: the older history is the backfill's.
    expect(await rowsOf(OLDER, 'netdiag')).toEqual([]);
    const backfill = await runCli(['monitor', 'influxdb-backfill', '--config', config], EVERY_SECOND);
    expect(backfill.stderr).toBe(`netdiag monitor: ${String(history.filter((r) => r.id <= cursor).length)} runs of the history written to ${influxd.url} (database netdiag); the outlet writes each run from here on\n`);
    expect(backfill.code).toBe(0);
    const olderKeys = ['time', 'check', 'server', 'source', 'outcome', 'download_mbps', 'upload_mbps', 'bytes_down', 'bytes_up', 'duration_ms'];
    expect((await rowsOf(OLDER, 'netdiag')).map((row) => pointOf(row, olderKeys))).toEqual([
      { time: older[0]?.startedAt, check: OLDER, server: server.url, source: '192.0.2.7', outcome: 'ok', download_mbps: 91.5, upload_mbps: 18, bytes_down: 123_456, bytes_up: 7_890, duration_ms: 5012 },
      { time: older[1]?.startedAt, check: OLDER, server: server.url, source: null, outcome: 'failed', download_mbps: null, upload_mbps: null, bytes_down: null, bytes_up: null, duration_ms: 40 },
      { time: older[2]?.startedAt, check: OLDER, server: server.url, source: null, outcome: 'skipped', download_mbps: null, upload_mbps: null, bytes_down: null, bytes_up: null, duration_ms: 0 },
    ]);
    expect(await rowsOf(CHECK, 'netdiag')).toHaveLength(delivered.length);

    // Once: with the older points deleted, a second call writes nothing back and says so.
    await influxd.query(`DELETE FROM netdiag_monitor WHERE "check" = '${OLDER}'`, 'netdiag');
    const again = await runCli(['monitor', 'influxdb-backfill', '--config', config], EVERY_SECOND);
    expect(again.code).toBe(0);
    expect(again.stderr).toMatch(/^netdiag monitor: the history before the outlet started was written to .* on 20\d\d-.*: nothing written \(each run since is the outlet's\)\n$/);
    expect(await rowsOf(OLDER, 'netdiag')).toEqual([]);
  }, 60_000);

  it('export --influx writes line protocol influxd reads back with each name as it was', async () => {
    const database = join(dir, 'export.db');
    const store = await openStore(database);
    const names = ['a=b, c', 'back\\slash', 'tab\tand "quote"'];
    const runs: RunRecord[] = names.map((check, i) => ({ check, server: 'https://netdiag.example', startedAt: Date.UTC(2026, 11, 1, 12, 0, i), durationMs: 7, ok: true, error: null, figures: { rpm: 900 + i, rpm_p90: 850.5 }, breaches: [] }));
    for (const run of runs) store.addRun(run);
    store.close();
    const config = join(dir, 'export.yaml');
    writeFileSync(config, `servers: [https://netdiag.example]\ndatabase: ${database}\nlisten: off\nchecks:\n  - name: x\n    run: rpm\n    every: 1h\n`);
    const exported = await runCli(['monitor', 'export', '--influx', '--config', config]);
    expect(exported.code).toBe(0);
    expect(exported.stderr).toBe('netdiag monitor: 3 runs exported as InfluxDB line protocol (precision ms)\n');
    // By the line-protocol reference: commas, equals signs and spaces in a tag value behind a backslash.
    expect(exported.stdout.split('\n')[0]).toBe('netdiag_monitor,check=a\\=b\\,\\ c,outcome=ok,server=https://netdiag.example rpm=900,rpm_p90=850.5,duration_ms=7i 1796126400000');

    await influxd.query('CREATE DATABASE exported');
    const written = await fetch(`${influxd.url}/write?db=exported&precision=ms`, { method: 'POST', body: exported.stdout });
    expect(written.status).toBe(204);
    const rows = await influxd.query('SELECT * FROM netdiag_monitor ORDER BY time', 'exported');
    // A backslash is written as a slash (1.x cannot end a tag with one, and reads a doubled one as two).
    expect(rows.map((r) => [r.time, r.check, r.rpm])).toEqual([
      [runs[0]?.startedAt, 'a=b, c', 900],
      [runs[1]?.startedAt, 'back/slash', 901],
      [runs[2]?.startedAt, 'tab\tand "quote"', 902],
    ]);
  });

  it('passes over a run influxd refuses for good (a field-type conflict), writing the rest of its batch; a missing database keeps the runs', async () => {
    await influxd.query('CREATE DATABASE conflict');
    // download_mbps taken as text first: a number in it is refused from now on (a field keeps its type within a shard).
    const at = Date.UTC(2026, 11, 1, 12, 0, 0);
    expect((await fetch(`${influxd.url}/write?db=conflict&precision=ms`, { method: 'POST', body: `netdiag_monitor,check=x download_mbps="fast" ${String(at)}` })).status).toBe(204);
    const run = (id: number, figures: Record<string, number>): NumberedRun => ({ id, check: `run ${String(id)}`, server: 'https://netdiag.example', startedAt: at + id * 1000, durationMs: 10, ok: true, error: null, figures, breaches: [] });
    const lines: string[] = [];
    const outlet = influxdbOutlet({ version: 1, url: influxd.url, database: 'conflict', retentionPolicy: null, username: null, password: null }, (l) => lines.push(l));
    await outlet.deliver([run(1, { rpm: 900 }), run(2, { download_mbps: 90 }), run(3, { rpm: 905 })]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^influxdb: run 2 on https:\/\/netdiag\.example at 2026-12-01T12:00:02\.000Z refused for good \(400 Bad Request: partial write: field type conflict: .*download_mbps.*\); passed over, kept in the history$/);
    expect((await influxd.query('SELECT "check", rpm FROM netdiag_monitor WHERE rpm > 0', 'conflict')).map((r) => r.check)).toEqual(['run 1', 'run 3']);

    const missing = influxdbOutlet({ version: 1, url: influxd.url, database: 'not_there', retentionPolicy: null, username: null, password: null }, (l) => lines.push(l));
    await expect(missing.deliver([run(4, { rpm: 1 })])).rejects.toThrow('404 Not Found: database not found: "not_there"');
    expect(lines).toHaveLength(1);
  });
});
