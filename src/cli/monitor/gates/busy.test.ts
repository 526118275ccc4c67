// The link-busy judgement: a rate against what the link carried each way, a percent against the
// capacity this monitor last measured (the newest speed test or RPM run against the server), and
// a percent with no capacity left unjudged rather than guessed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseMonitorConfig, type MonitorConfig } from '../monitor-config.js';
import { openStore, type RunRecord, type Store } from '../store.js';
import { busyGate, busyReason, measuredCapacity } from './busy.js';

const percent = (n: number) => ({ limit: { percent: n }, text: `${String(n)}%` });
const capacity = { down: 100, up: 20, from: '"line speed" measured at 2026-12-06T20:00:00.000Z' };

describe('busyReason', () => {
  it('skips at a rate either way at or above the limit, naming the busier direction and its figure', () => {
    const limit = { limit: { mbitPerSecond: 5 }, text: '5 Mbit/s' };
    expect(busyReason(limit, { down: 1.5, up: 7.25 }, 'eth0', undefined)).toBe('the link was carrying 7.25 Mbit/s up on eth0 (skip_when_busy: 5 Mbit/s)');
    expect(busyReason(limit, { down: 4.9, up: 0.1 }, 'eth0', undefined)).toBeUndefined();
  });

  it('judges a percent of each direction on its own capacity: 5 Mbit/s up of 20 is 25% busy though the download is quiet', () => {
    expect(busyReason(percent(20), { down: 5, up: 5 }, 'eth0', capacity)).toBe('the link was 25% busy (skip_when_busy: 20%): 5.00 Mbit/s up on eth0 of the 20.0 Mbit/s "line speed" measured at 2026-12-06T20:00:00.000Z');
    expect(busyReason(percent(20), { down: 19, up: 3 }, 'eth0', capacity)).toBeUndefined();
    expect(busyReason(percent(20), { down: 34, up: 1 }, 'eth0', capacity)).toBe('the link was 34% busy (skip_when_busy: 20%): 34.0 Mbit/s down on eth0 of the 100 Mbit/s "line speed" measured at 2026-12-06T20:00:00.000Z');
  });

  it('leaves a percent unjudged with no capacity, and judges only the directions whose capacity is known', () => {
    expect(busyReason(percent(20), { down: 500, up: 500 }, 'eth0', undefined)).toEqual({ unjudged: true });
    expect(busyReason(percent(20), { down: 1, up: 500 }, 'eth0', { down: 100, from: 'x' })).toBeUndefined();
  });
});

describe('measuredCapacity', () => {
  let dir: string;
  let store: Store;
  let config: MonitorConfig;
  const server = 'https://netdiag.example.net';
  const run = (check: string, startedAt: number, figures: Record<string, unknown>, ok = true): RunRecord => ({ check, server, startedAt, durationMs: 1000, ok, error: ok ? null : 'failed', figures, breaches: [], chosen: null, sourceAddress: null });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'netdiag-busy-'));
    store = await openStore(join(dir, 'monitor.db'));
    config = parseMonitorConfig(`servers: [${server}]\nchecks:\n  - name: line speed\n    run: speedtest\n    every: 30m\n  - name: responsiveness\n    run: rpm\n    every: 2h\n  - name: round trip\n    run: latency\n    every: 5m\n`, 'monitor.yaml', join(dir, 'monitor.db'));
  });
  afterAll(() => {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('is undefined until a run measured the link', () => {
    store.addRun(run('round trip', 1000, { latency_ms: 12 }));
    expect(measuredCapacity(store, config, server)).toBeUndefined();
  });

  it('is the newest measuring run of any check against the server, a failed run passed over', () => {
    store.addRun(run('line speed', 2000, { download_mbps: 92, upload_mbps: 18 }));
    store.addRun(run('responsiveness', 3000, { download_mbps: 88, upload_mbps: 17 }));
    store.addRun(run('line speed', 4000, {}, false));
    expect(measuredCapacity(store, config, server)).toEqual({ down: 88, up: 17, from: `"responsiveness" measured at ${new Date(3000).toISOString()}` });
    expect(measuredCapacity(store, config, 'https://other.example.net')).toBeUndefined();
  });
});

describe('busyGate', () => {
  it('lets a percent it cannot judge go, saying so once: a server on loopback, whose interface reports no speed, and no speed test in the history', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'netdiag-busy-gate-'));
    const before = process.env.NETDIAG_MONITOR_BUSY_SAMPLE;
    process.env.NETDIAG_MONITOR_BUSY_SAMPLE = '1s';
    const store = await openStore(join(dir, 'monitor.db'));
    try {
      const server = 'http://127.0.0.1:9';
      const config = parseMonitorConfig(`servers: [${server}]\nchecks:\n  - name: round trip\n    run: latency\n    every: 5m\n    skip_when_busy: 20%\n`, 'monitor.yaml', join(dir, 'monitor.db'));
      const said: string[] = [];
      const gate = busyGate({ store: () => store, config: () => config, log: (line) => said.push(line) });
      const check = config.checks[0];
      if (check === undefined) throw new Error('no check');
      expect(await gate(check, server)).toBeUndefined();
      expect(await gate(check, server)).toBeUndefined();
      expect(said).toEqual([`round trip on ${server}: skip_when_busy 20% cannot be judged yet: no speed test or RPM run against it in the history measured the link, and lo reports no speed of its own; the run goes ahead (a rate such as 5 Mbit/s needs neither)`]);
    } finally {
      store.close();
      if (before === undefined) delete process.env.NETDIAG_MONITOR_BUSY_SAMPLE;
      else process.env.NETDIAG_MONITOR_BUSY_SAMPLE = before;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
