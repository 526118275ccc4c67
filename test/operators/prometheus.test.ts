// The Prometheus rules (deploy/prometheus/) and the Grafana dashboard (deploy/grafana/) held to
// what netdiag really exports. promtool checks the rules file and runs its unit tests; then a real
// Prometheus scrapes a live netdiag every second with the rules loaded, and every rule's
// expression is queried through its HTTP API: each must run, and each series selector in it must
// select series the live service exports (a misspelt metric or label would select none). The
// dashboard's expressions may name only metrics in the live /metrics output.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { startCollector, type Collector } from '../support/collector.js';
import { startFakeDns, type FakeDns } from '../support/fake-dns.js';
import { send } from '../support/http.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';
import { eventually, freePort } from '../support/wait.js';
import { dashboardTargets, exportedIn, problemsOf as checkExpression, readDashboard, type QueryReply } from '../support/prometheus.js';

const ready = requireCommands('prometheus rules', ['prometheus', 'promtool'], 'prometheus');

const RULES = fileURLToPath(new URL('../../deploy/prometheus/netdiag-rules.yml', import.meta.url));
const RULE_TESTS = fileURLToPath(new URL('../../deploy/prometheus/netdiag-rules.test.yml', import.meta.url));
const DASHBOARD = fileURLToPath(new URL('../../deploy/grafana/netdiag-dashboard.json', import.meta.url));

interface Rule {
  record?: string;
  alert?: string;
  expr: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

const rules = (parseYaml(readFileSync(RULES, 'utf8')) as { groups: { name: string; rules: Rule[] }[] }).groups.flatMap((g) => g.rules);
const recordings = rules.filter((r) => r.record !== undefined);
const alerts = rules.filter((r) => r.alert !== undefined);
const nameOf = (rule: Rule) => rule.record ?? rule.alert ?? '';

/** A command's exit code and everything it printed. */
function run(command: string, args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { encoding: 'utf8' }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : -1;
      resolve({ code, output: stdout + stderr });
    });
  });
}

describe.skipIf(!ready)('the Prometheus rules file', () => {
  it('passes promtool check rules', async () => {
    const checked = await run('promtool', ['check', 'rules', RULES]);
    expect(checked).toEqual({ code: 0, output: expect.stringContaining(`SUCCESS: ${String(rules.length)} rules found`) as unknown });
  });

  it('passes its own promtool unit tests, one firing and one quiet case for every alert', async () => {
    const tested = await run('promtool', ['test', 'rules', RULE_TESTS]);
    expect(tested).toEqual({ code: 0, output: expect.stringContaining('SUCCESS') as unknown });
    // Every alert of the rules file appears in the tests, both firing and not.
    const tests = (parseYaml(readFileSync(RULE_TESTS, 'utf8')) as { tests: { alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[] }[] }).tests.flatMap((t) => t.alert_rule_test ?? []);
    for (const alert of alerts.map(nameOf)) {
      const cases = tests.filter((t) => t.alertname === alert);
      expect({ alert, fires: cases.some((c) => c.exp_alerts.length > 0), quiet: cases.some((c) => c.exp_alerts.length === 0) }).toEqual({ alert, fires: true, quiet: true });
    }
  });

  it('gives every alert a severity, a summary and a description', () => {
    expect(alerts.length).toBeGreaterThan(0);
    for (const alert of alerts) {
      expect({ alert: alert.alert, severity: alert.labels?.severity, summary: typeof alert.annotations?.summary, description: typeof alert.annotations?.description }).toEqual({
        alert: alert.alert,
        severity: expect.stringMatching(/^(critical|warning)$/) as unknown,
        summary: 'string',
        description: 'string',
      });
    }
  });
});

describe.skipIf(!ready)('the rules and the dashboard against a live netdiag scraped by a real Prometheus', () => {
  let fake: FakeDns;
  let collector: Collector;
  let server: TestServer;
  let prometheus: ChildProcess | undefined;
  let prometheusLog = '';
  let dir: string | undefined;
  let api: string;
  let metricsUrl: string;

  const query = async (expr: string): Promise<QueryReply> => {
    const res = await fetch(`${api}/api/v1/query`, { method: 'POST', body: new URLSearchParams({ query: expr }) });
    return (await res.json()) as QueryReply;
  };
  const get = async <T>(path: string): Promise<T> => (await (await fetch(`${api}${path}`)).json()) as T;

  const problemsOf = (name: string, expr: string) => checkExpression({ query }, name, expr);

  beforeAll(async () => {
    // An upstream that answers every name but those of a dead zone and every reverse name (their
    // servers never answer), so the traffic below gives each upstream outcome the rules read.
    fake = await startFakeDns('dead-zone');
    collector = await startCollector('accept');
    server = await startTestServer({
      NETDIAG_DNS_UPSTREAM: `udp://127.0.0.1:${String(fake.port)}`,
      NETDIAG_DNS_TIMEOUT_MS: '1000',
      // A cap of 8 lookups in flight; the callers' PTRs get a quarter of it: 2.
      NETDIAG_DNS_MAX_OUTSTANDING: '8',
      // Nothing listens on port 9: the probe is unreachable, so netdiag_probe_up is 0.
      NETDIAG_PROBES: 'weur=http://127.0.0.1:9',
      // An HTTP collector: only then are the queue depth, delivered and dropped exported.
      NETDIAG_EVENTS_SINK: collector.url,
      NETDIAG_TRUST_PROXY: 'loopback',
      NETDIAG_RATE_LIMITS: 'dns=1000,ip=1000',
      NETDIAG_METRICS_PORT: '0',
    });
    metricsUrl = `http://127.0.0.1:${String(server.running.metricsPort)}/metrics`;

    const work = mkdtempSync(join(tmpdir(), 'netdiag-prometheus-'));
    dir = work;
    const port = await freePort();
    api = `http://127.0.0.1:${String(port)}`;
    writeFileSync(
      join(work, 'prometheus.yml'),
      `global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - ${JSON.stringify(RULES)}
scrape_configs:
  - job_name: netdiag
    static_configs:
      - targets: ['127.0.0.1:${String(server.running.metricsPort)}']
`,
    );
    prometheus = spawn('prometheus', [`--config.file=${join(work, 'prometheus.yml')}`, `--storage.tsdb.path=${join(work, 'data')}`, `--web.listen-address=127.0.0.1:${String(port)}`], { stdio: ['ignore', 'pipe', 'pipe'] });
    const keep = (chunk: Buffer) => {
      prometheusLog += chunk.toString('utf8');
    };
    prometheus.stdout?.on('data', keep);
    prometheus.stderr?.on('data', keep);

    // Traffic, while Prometheus starts. The server trusts loopback as its proxy, so each /v1/ip
    // names its caller as a proxy would: each its own /64.
    const resolve = (name: string) => send(`${server.url}/v1/dns/resolve?name=${name}&type=A`);
    expect((await resolve('www.example.test')).status).toBe(200);
    const asked = fake.queries();
    // Four callers' PTRs: two hold the callers' share and time out, two are not asked (ptr_budget).
    const ips = [1, 2, 3, 4].map((i) => send(`${server.url}/v1/ip`, { headers: { 'X-Forwarded-For': `2001:db8:${String(i)}::1` } }));
    // Six names of the dead zone fill the rest of the cap (504 when their deadline passes)...
    const dead = [1, 2, 3, 4, 5, 6].map((i) => resolve(`h${String(i)}.dead.example`));
    expect(await eventually(() => fake.queries() >= asked + 8, 2_000, 5)).toBe(true);
    // ...so the next lookup is refused before the upstream: 503, outcome unavailable, never timed.
    expect((await resolve('h7.dead.example')).status).toBe(503);
    expect((await send(`${server.url}/v1/latency/regions/weur/probe`)).status).toBe(503);
    const event = JSON.stringify({ event: 'speed_test_started', event_id: '7f1c3e0a-5b2d-4c8e-9a6f-1d2e3f4a5b6c', properties: { source: 'cli', mode: 'light' } });
    expect((await send(`${server.url}/v1/events`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: event })).status).toBe(202);
    expect((await send(`${server.url}/v1/health`)).status).toBe(200);
    expect((await Promise.all(ips)).map((r) => r.status)).toEqual([200, 200, 200, 200]);
    expect((await Promise.all(dead)).map((r) => r.status)).toEqual([504, 504, 504, 504, 504, 504]);
    const trafficDone = Date.now() / 1000;

    const started = await eventually(async () => (await fetch(`${api}/-/ready`).catch(() => undefined))?.status === 200, 15_000, 100);
    expect({ started, log: started ? '' : prometheusLog }).toEqual({ started: true, log: '' });
    // Two scrapes after the traffic, so a series it created has the two samples rate() needs...
    let scrapedAt = 0;
    const scrapedAfter = async (time: number) => {
      const target = (await get<{ data: { activeTargets: { health: string; lastScrape: string }[] } }>('/api/v1/targets')).data.activeTargets[0];
      scrapedAt = target?.health === 'up' ? Date.parse(target.lastScrape) / 1000 : 0;
      return scrapedAt > time;
    };
    expect(await eventually(() => scrapedAfter(trafficDone), 15_000, 100)).toBe(true);
    expect(await eventually(() => scrapedAfter(scrapedAt), 5_000, 100)).toBe(true);
    // ...then every rule group evaluated after that scrape, so the recorded series exist.
    const evaluated = await eventually(async () => {
      const groups = (await get<{ data: { groups: { lastEvaluation: string }[] } }>('/api/v1/rules')).data.groups;
      return groups.length > 0 && groups.every((g) => Date.parse(g.lastEvaluation) / 1000 > scrapedAt);
    }, 10_000, 100);
    expect(evaluated).toBe(true);
  }, 45_000);

  afterAll(async () => {
    if (prometheus !== undefined && prometheus.exitCode === null) {
      const exited = once(prometheus, 'exit');
      prometheus.kill('SIGTERM');
      const stuck = setTimeout(() => {
        prometheus?.kill('SIGKILL');
      }, 5_000);
      await exited;
      clearTimeout(stuck);
    }
    await server.close();
    await collector.close();
    await fake.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('loads every rule of the file, and each evaluates without error', async () => {
    const loaded = (await get<{ data: { groups: { rules: { name: string; health: string; lastError?: string }[] }[] } }>('/api/v1/rules')).data.groups.flatMap((g) => g.rules);
    expect(loaded.map((r) => r.name).sort()).toEqual(rules.map(nameOf).sort());
    expect(loaded.filter((r) => r.health !== 'ok').map((r) => `${r.name}: ${r.health} ${r.lastError ?? ''}`)).toEqual([]);
  });

  it('every recording rule gives series from the live netdiag, and every selector in it selects series it exports', async () => {
    const problems: string[] = [];
    for (const rule of recordings) {
      problems.push(...(await problemsOf(nameOf(rule), rule.expr)));
      const result = await query(rule.expr);
      if ((result.data?.result.length ?? 0) === 0) problems.push(`${nameOf(rule)}: no series`);
    }
    expect(problems).toEqual([]);
    // The cap's refusals, told apart from the upstream's by their missing duration: exactly the
    // one lookup refused above.
    const refused = await query('netdiag:dns_upstream_refused_locally:total');
    expect(refused.data?.result.map((s) => s.value[1])).toEqual(['1']);
  });

  it("every alert's expression runs, and every selector in it selects series the live netdiag exports", async () => {
    const problems: string[] = [];
    for (const rule of alerts) problems.push(...(await problemsOf(nameOf(rule), rule.expr)));
    expect(problems).toEqual([]);
  });

  it('would fail a rule naming a metric or a label value netdiag does not export', async () => {
    expect(await problemsOf('control', 'netdiag_dns_upstream_lookups_total{outcome="answers"} > 0 or rate(netdiag_no_such_total[5m]) or netdiag_http_requests_total{status!="5OO"}')).toEqual([
      'control: netdiag_dns_upstream_lookups_total{outcome="answers"} selects no series',
      'control: netdiag_no_such_total selects no series',
      'control: netdiag_http_requests_total{status="5OO"} selects no series',
    ]);
  });

  it("the dashboard's expressions name only metrics in the live /metrics output, and Prometheus runs each", async () => {
    const dashboard = readDashboard(DASHBOARD);
    expect(dashboard.schemaVersion).toBe(39);
    expect(dashboard.templating.list.find((v) => v.name === 'datasource')).toMatchObject({ type: 'datasource', query: 'prometheus' });
    const targets = dashboardTargets(dashboard);
    expect(targets.length).toBeGreaterThan(0);
    expect(targets.filter((t) => t.uid !== '${datasource}').map((t) => t.panel)).toEqual([]);
    const exported = exportedIn(await (await fetch(metricsUrl)).text());
    // `up` is Prometheus's own series for the scrape, not in the exposition: asked of Prometheus.
    const up = await query('count(up{job="netdiag"})');
    const unknown = new Set<string>();
    const failing: string[] = [];
    for (const { panel, expr } of targets) {
      for (const [name] of expr.matchAll(/\b(?:netdiag_[a-z_]+|process_[a-z_]+|nodejs_[a-z_]+|up)\b/g)) {
        if (name === 'up' ? (up.data?.result.length ?? 0) === 0 : !exported(name)) unknown.add(`${panel}: ${name}`);
      }
      // Grafana's variables as a query for every instance of the job would have them.
      const concrete = expr.replaceAll('$__rate_interval', '1m').replaceAll('$job', 'netdiag').replaceAll('$instance', '.+');
      const result = await query(concrete);
      if (result.status !== 'success') failing.push(`${panel}: ${result.error ?? ''}`);
    }
    expect([...unknown]).toEqual([]);
    expect(failing).toEqual([]);
  });
});
