// `netdiag monitor`'s metrics as Prometheus sees them (docs/monitor.md, "Prometheus"): a real Prometheus scrapes a
// running monitor's /metrics with deploy/prometheus/netdiag-monitor-rules.yml loaded. Every rule
// loads and evaluates, every selector in it selects series the monitor exports, and the alert on
// the monitor's own judgement fires for the check whose alert is out and not for the one that
// meets its expectations. The Grafana dashboard (deploy/grafana/netdiag-monitor-dashboard.json)
// names only metrics the monitor exports, and Prometheus runs each of its expressions.
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { runLinesOf, startMonitor, until, type MonitorProcess } from '../support/monitor-process.js';
import { dashboardTargets, exportedIn, problemsOf, readDashboard, startPrometheus, type Prometheus } from '../support/prometheus.js';
import { LOOPBACK_TRANSFERS, startTestServer, type TestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';
import { eventually, freePort } from '../support/wait.js';

const ready = requireCommands("the monitor's metrics in Prometheus", ['prometheus'], 'prometheus');

const RULES = fileURLToPath(new URL('../../deploy/prometheus/netdiag-monitor-rules.yml', import.meta.url));
const DASHBOARD = fileURLToPath(new URL('../../deploy/grafana/netdiag-monitor-dashboard.json', import.meta.url));
const rules = (parseYaml(readFileSync(RULES, 'utf8')) as { groups: { rules: { alert: string; expr: string }[] }[] }).groups.flatMap((g) => g.rules);

describe.skipIf(!ready)("netdiag monitor's /metrics scraped by a real Prometheus", () => {
  let dir: string;
  let server: TestServer;
  let monitor: MonitorProcess;
  let prometheus: Prometheus;
  let metricsUrl: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'netdiag-monitor-prometheus-'));
    server = await startTestServer({ NETDIAG_EVENTS_SINK: 'none', NETDIAG_RATE_LIMITS: 'speedtest=100000,ip=100000,probe=100000', ...LOOPBACK_TRANSFERS });
    const port = await freePort();
    metricsUrl = `http://127.0.0.1:${String(port)}/metrics`;
    const config = join(dir, 'monitor.yaml');
    writeFileSync(
      config,
      `servers: [${server.url}]\ndatabase: ${join(dir, 'monitor.db')}\nlisten: 127.0.0.1:${String(port)}\nchecks:\n` +
        `  - name: line speed\n    run: speedtest\n    mode: light\n    cron: "*/2 * * * * *"\n    spread: 0s\n    expect: { download_mbps: ">= 0.001" }\n` +
        `  - name: round trip\n    run: latency\n    cron: "* * * * * *"\n    spread: 0s\n    expect: { client_to_api_rtt_ms: "< 0" }\n    alert_after: 1\n`,
    );
    monitor = startMonitor(config);
    await until('a speed test and a latency check', () => runLinesOf(monitor.lines, 'line speed').length >= 1 && runLinesOf(monitor.lines, 'round trip').length >= 1, 60_000, monitor.lines);
    prometheus = await startPrometheus({ 'netdiag-monitor': `127.0.0.1:${String(port)}` }, [RULES]);
    expect({ settled: await prometheus.settled(), log: '' }).toEqual({ settled: true, log: '' });
  }, 120_000);

  afterAll(async () => {
    await prometheus.close();
    monitor.child.kill('SIGTERM');
    await once(monitor.child, 'exit');
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('scrapes the figures of each check by its labels', async () => {
    const download = await prometheus.query(`netdiag_monitor_figure{job="netdiag-monitor", check="line speed", server="${server.url}", figure="download_mbps"}`);
    expect(Number(download.data?.result[0]?.value[1])).toBeGreaterThan(0);
    const rtt = await prometheus.query('netdiag_monitor_figure{check="round trip", figure="client_to_api_rtt_ms"}');
    expect(Number(rtt.data?.result[0]?.value[1])).toBeGreaterThan(0);
  });

  it('loads every rule, each selector selects series the monitor exports, and NetdiagMonitorBreaching fires for the alerting check only', async () => {
    const loaded = (await prometheus.get<{ data: { groups: { rules: { name: string; health: string }[] }[] } }>('/api/v1/rules')).data.groups.flatMap((g) => g.rules);
    expect(loaded.map((r) => [r.name, r.health]).sort()).toEqual(rules.map((r) => [r.alert, 'ok']).sort());
    const problems: string[] = [];
    for (const rule of rules) problems.push(...(await problemsOf(prometheus, rule.alert, rule.expr)));
    expect(problems).toEqual([]);
    const firing = await eventually(async () => {
      const alerts = (await prometheus.get<{ data: { alerts: { labels: Record<string, string>; state: string }[] } }>('/api/v1/alerts')).data.alerts;
      return alerts.some((a) => a.labels.alertname === 'NetdiagMonitorBreaching' && a.state === 'firing');
    }, 10_000, 200);
    expect(firing).toBe(true);
    const alerts = (await prometheus.get<{ data: { alerts: { labels: Record<string, string>; state: string }[] } }>('/api/v1/alerts')).data.alerts;
    expect(alerts.filter((a) => a.labels.alertname === 'NetdiagMonitorBreaching').map((a) => a.labels.check)).toEqual(['round trip']);
  });

  it("the dashboard's expressions name only metrics the monitor exports, and Prometheus runs each", async () => {
    const dashboard = readDashboard(DASHBOARD);
    expect(dashboard.schemaVersion).toBe(39);
    const targets = dashboardTargets(dashboard);
    expect(targets.length).toBeGreaterThan(0);
    expect(targets.filter((t) => t.uid !== '${datasource}').map((t) => t.panel)).toEqual([]);
    const exported = exportedIn(await (await fetch(metricsUrl)).text());
    const unknown: string[] = [];
    const failing: string[] = [];
    const withData = new Set<string>();
    for (const { panel, expr } of targets) {
      for (const [name] of expr.matchAll(/\bnetdiag_[a-z_]+\b/g)) if (!exported(name)) unknown.push(`${panel}: ${name}`);
      const concrete = expr.replaceAll('$__rate_interval', '1m').replaceAll('$job', 'netdiag-monitor').replaceAll('$check', '.+');
      const result = await prometheus.query(concrete);
      if (result.status !== 'success') failing.push(`${panel}: ${result.error ?? ''}`);
      if ((result.data?.result.length ?? 0) > 0) withData.add(panel);
    }
    expect(unknown).toEqual([]);
    expect(failing).toEqual([]);
    // Every panel shows something from a speed test and a latency check but Responsiveness (no rpm
    // check here: the test server has no TLS for it).
    expect([...new Set(targets.map((t) => t.panel))].filter((panel) => !withData.has(panel))).toEqual(['Responsiveness']);
    // The variables' own queries find the job and the checks.
    const checks = await prometheus.get<{ data: string[] }>('/api/v1/label/check/values?match[]=netdiag_monitor_runs_total{job="netdiag-monitor"}');
    expect(checks.data.sort()).toEqual(['line speed', 'round trip']);
  });
});
