// /latest.json (docs/monitor.md, "Latest results"), served by a running `netdiag monitor` whose
// checks run against a real server: one entry per check and server in the configuration's order,
// each in its state (meeting, breaching, alerting, no run yet: the test server has no IPv6 origin,
// so an IPv6 expectation breaches), with its streak, its last run, every figure of its kind with
// the unit its kind gives, when it ran and runs next. Paused, an entry's last run is the skipped
// slot while its figures stay those last measured. A request naming the monitor by a name not in
// `hosts:` is refused (DNS rebinding), one in `hosts:` answered.
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runLinesOf, startMonitor, until, type MonitorProcess } from '../support/monitor-process.js';
import { runCli } from '../support/process.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { freePort } from '../support/wait.js';

interface Entry {
  check: string;
  server: string;
  run: string;
  state: string;
  streak: number;
  alerting: boolean;
  last_run: { started_at: string; outcome: string; error: string | null; breaches: string[] } | null;
  figures: Record<string, { value: number | string | null; unit: string | null }>;
  figures_at: string | null;
  next_run_at: string | null;
}

interface Latest {
  generated_at: string;
  paused: boolean;
  paused_until: string | null;
  checks: Entry[];
}

/** GET `path` of the monitor with `host` as its Host header; the status and body. */
function getWithHost(port: number, path: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { Host: host } }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => (body += d.toString()));
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, body });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

const ENV = { NETDIAG_MONITOR_MIN_INTERVAL: '1s' };

describe('/latest.json', () => {
  let dir: string;
  let server: TestServer;
  let monitor: MonitorProcess;
  let port: number;
  let config: string;
  const latest = async (): Promise<Latest> => JSON.parse((await getWithHost(port, '/latest.json', `127.0.0.1:${String(port)}`)).body) as Latest;
  const entry = (body: Latest, check: string): Entry | undefined => body.checks.find((c) => c.check === check);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'netdiag-monitor-latest-'));
    server = await startTestServer({ NETDIAG_EVENTS_SINK: 'none', NETDIAG_RATE_LIMITS: 'speedtest=100000,ip=100000' });
    port = await freePort();
    config = join(dir, 'monitor.yaml');
    const families = (name: string, cron: string, expect: string, alertAfter: number) => `  - name: ${name}\n    run: families\n    cron: "${cron}"\n    spread: 0s\n    expect: { ${expect} }\n    alert_after: ${String(alertAfter)}\n`;
    writeFileSync(
      config,
      `servers: [${server.url}]\ndatabase: ${join(dir, 'monitor.db')}\nlisten: 127.0.0.1:${String(port)}\nhosts: [monitor.example.lan]\nchecks:\n` +
        families('v4', '* * * * * *', 'ipv4: "= ok"', 3) +
        families('v6 alerting', '* * * * * *', 'ipv6: "= ok"', 1) +
        families('v6 breaching', '* * * * * *', 'ipv6: "= ok"', 1000) +
        // Once a year: no run while the suite lasts.
        families('yearly', '0 0 1 1 *', 'ipv4: "= ok"', 3),
    );
    monitor = startMonitor(config, ENV);
    await until('a run of each check run each second', () => ['v4', 'v6 alerting', 'v6 breaching'].every((c) => runLinesOf(monitor.lines, c).length >= 1), 15_000, monitor.lines);
  }, 20_000);

  afterAll(async () => {
    monitor.child.kill('SIGTERM');
    await once(monitor.child, 'exit');
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('an entry per check and server: state, streak, last run, figures with units, next run', async () => {
    const body = await latest();
    expect(body.paused).toBe(false);
    expect(body.paused_until).toBeNull();
    expect(body.checks.map((c) => [c.check, c.server, c.run, c.state])).toEqual([
      ['v4', server.url, 'families', 'meeting'],
      ['v6 alerting', server.url, 'families', 'alerting'],
      ['v6 breaching', server.url, 'families', 'breaching'],
      ['yearly', server.url, 'families', 'no_run_yet'],
    ]);
    const v4 = entry(body, 'v4');
    expect(v4).toMatchObject({ streak: 0, alerting: false, last_run: { outcome: 'ok', error: null, breaches: [] } });
    // Every figure of a families check, each with its unit: a time in ms, a family's state none.
    expect(Object.keys(v4?.figures ?? {}).sort()).toEqual(['ipv4', 'ipv4_ms', 'ipv6', 'ipv6_ms']);
    expect(v4?.figures.ipv4).toEqual({ value: 'ok', unit: null });
    expect(v4?.figures.ipv4_ms).toEqual({ value: expect.any(Number) as number, unit: 'ms' });
    expect(v4?.figures_at).toBe(v4?.last_run?.started_at);
    expect(Date.parse(v4?.next_run_at ?? '')).toBeGreaterThan(Date.parse(v4?.last_run?.started_at ?? ''));
    const alerting = entry(body, 'v6 alerting');
    expect(alerting?.alerting).toBe(true);
    expect(alerting?.streak).toBeGreaterThanOrEqual(1);
    expect(alerting?.last_run?.breaches[0]).toMatch(/^ipv6 /);
    expect(alerting?.figures.ipv6?.value).not.toBe('ok');
    expect(entry(body, 'v6 breaching')).toMatchObject({ alerting: false, streak: expect.any(Number) as number });
    expect(entry(body, 'v6 breaching')?.streak).toBeGreaterThanOrEqual(1);
    const yearly = entry(body, 'yearly');
    expect(yearly).toMatchObject({ streak: 0, alerting: false, last_run: null, figures_at: null });
    expect(Object.values(yearly?.figures ?? {}).map((f) => f.value)).toEqual([null, null, null, null]);
    expect(yearly?.next_run_at).not.toBeNull();
  });

  it('paused: the last run is the skipped slot, the figures those last measured', async () => {
    const paused = await runCli(['monitor', 'pause', '10m', '--config', config], ENV);
    expect(paused.code, paused.stderr).toBe(0);
    const skippedRuns = () => runLinesOf(monitor.lines, 'v4').filter((l) => l.includes(': skipped: paused until ')).length;
    await until('a skipped slot of v4', () => skippedRuns() >= 1, 10_000, monitor.lines);
    const body = await latest();
    expect(body.paused).toBe(true);
    expect(Date.parse(body.paused_until ?? '') - Date.now()).toBeGreaterThan(500_000);
    const v4 = entry(body, 'v4');
    expect(v4?.last_run?.outcome).toBe('skipped');
    expect(v4?.last_run?.error).toBe(`paused until ${body.paused_until ?? ''} (netdiag monitor resume ends it)`);
    expect(v4?.state).toBe('meeting');
    expect(v4?.figures.ipv4?.value).toBe('ok');
    expect(Date.parse(v4?.figures_at ?? '')).toBeLessThan(Date.parse(v4?.last_run?.started_at ?? ''));
  });

  it('answers a name of hosts:, refuses another (DNS rebinding)', async () => {
    expect((await getWithHost(port, '/latest.json', 'monitor.example.lan:9465')).status).toBe(200);
    expect((await getWithHost(port, '/latest.json', 'rebound.example:9465')).status).toBe(403);
  });
});
