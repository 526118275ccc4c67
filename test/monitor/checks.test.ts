// The monitor's dns, families and latency checks (docs/monitor.md, "Checks and their figures") against a real netdiag server: a DNS
// answer that changes (Knot's record replaced through knotc) alerts after `alert_after` runs in a
// row and recovers when the answer comes back; an IPv6 origin that stops answering alerts as a
// family that stopped working; a latency check records the client's round trip. Alerts go to a
// plain JSON webhook, the third channel beside Apprise and ntfy.
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startKnot, type Knot } from '../support/knot.js';
import { runLinesOf, startMonitor, until, type MonitorProcess } from '../support/monitor-process.js';
import { startTestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';
import { freePort } from '../support/wait.js';
import { startWebhookReceiver, type Notice, type WebhookReceiver } from '../support/webhook-receiver.js';

const ready = requireCommands('netdiag monitor checks', ['knotd', 'knotc'], 'knot');

const stop = async (monitor: MonitorProcess) => {
  if (monitor.child.exitCode !== null) return;
  monitor.child.kill('SIGTERM');
  await once(monitor.child, 'exit');
};

describe.skipIf(!ready)("netdiag monitor's dns, families and latency checks", () => {
  let dir: string;
  let knot: Knot;
  let hook: WebhookReceiver;
  let hookUrl: string;
  let notices: Notice[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'netdiag-monitor-checks-'));
    knot = await startKnot();
    hook = await startWebhookReceiver();
    hookUrl = hook.url;
    notices = hook.notices;
  });
  afterAll(async () => {
    hook.close();
    await knot.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const configFile = (name: string, servers: string, checks: string): string => {
    const file = join(dir, `${name}.yaml`);
    writeFileSync(file, `servers: [${servers}]\ndatabase: ${join(dir, `${name}.db`)}\nlisten: off\nchecks:\n${checks}notify: ["${hookUrl}"]\n`);
    return file;
  };
  const noticesOf = (check: string) => notices.filter((n) => n.check === check);

  it('a DNS answer that changes: one alert after two runs with the new answer, naming both; one recovery when it is back; every run in the history', async () => {
    const server = await startTestServer({ NETDIAG_DNS_UPSTREAM: `udp://127.0.0.1:${String(knot.port)}`, NETDIAG_RATE_LIMITS: 'dns=100000' });
    // zero.example.test has a TTL of 0: no cache between the monitor and Knot's current answer.
    const file = configFile('dns', server.url, '  - name: answer\n    run: dns\n    query: zero.example.test\n    type: A\n    cron: "* * * * * *"\n    spread: 0s\n    expect: { answers: unchanged, response_code: "= no_error" }\n    alert_after: 2\n');
    const monitor = startMonitor(file);
    const runs = () => runLinesOf(monitor.lines, 'answer');
    try {
      await until('two runs with the first answer', () => runs().length >= 2, 30_000, monitor.lines);
      knot.setAddress('zero', '192.0.2.99', 0);
      await until('the alert', () => noticesOf('answer').length >= 1, 30_000, monitor.lines);
      const atAlert = runs().length;
      await until('a further changed run', () => runs().length > atAlert, 30_000, monitor.lines);
      knot.setAddress('zero', '192.0.2.40', 0);
      await until('the recovery', () => noticesOf('answer').length >= 2, 30_000, monitor.lines);
    } finally {
      await stop(monitor);
      await server.close();
    }
    const [alert, recovery, ...more] = noticesOf('answer');
    expect(more).toEqual([]);
    expect(alert).toMatchObject({ kind: 'alert', title: `netdiag monitor: answer on ${server.url}: 2 breaches in a row` });
    // The two breaches the title counts, each with its time.
    expect(alert?.body.split('\n')).toEqual([expect.stringMatching(/^- [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z: answers `192\.0\.2\.99` \(expected unchanged from `192\.0\.2\.40`\)$/), expect.stringMatching(/^- [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z: answers `192\.0\.2\.99` \(expected unchanged from `192\.0\.2\.40`\)$/)]);
    expect(recovery).toMatchObject({ kind: 'recovery', title: `netdiag monitor: answer on ${server.url} recovered` });
    const db = new DatabaseSync(join(dir, 'dns.db'), { readOnly: true });
    const rows = (db.prepare("SELECT figures FROM runs WHERE check_name = 'answer' ORDER BY id").all() as { figures: string }[]).map((r) => JSON.parse(r.figures) as { answers: string; answer_count: number });
    db.close();
    expect(rows).toHaveLength(runs().length);
    expect(rows[0]).toEqual({ response_code: 'no_error', answers: '192.0.2.40', answer_count: 1 });
    expect(rows.some((r) => r.answers === '192.0.2.99')).toBe(true);
    expect(rows.at(-1)?.answers).toBe('192.0.2.40');
  }, 120_000);

  it("an answer a server's owner chose reaches the alert inert: no mention, link, bidi control or line break a chat app acts", async () => {
    const server = await startTestServer({ NETDIAG_DNS_UPSTREAM: `udp://127.0.0.1:${String(knot.port)}`, NETDIAG_RATE_LIMITS: 'dns=100000' });
    const file = configFile('hostile', server.url, '  - name: hostile answer\n    run: dns\n    query: chat.hostile.test\n    type: TXT\n    cron: "* * * * * *"\n    spread: 0s\n    expect: { answers: "= expected words" }\n    alert_after: 1\n');
    const monitor = startMonitor(file);
    try {
      await until('the alert', () => noticesOf('hostile answer').length >= 1, 30_000, monitor.lines);
    } finally {
      await stop(monitor);
      await server.close();
    }
    expect(noticesOf('hostile answer')[0]?.title).toBe(`netdiag monitor: hostile answer on ${server.url}: 1 breach`);
    const body = noticesOf('hostile answer')[0]?.body ?? '';
    // The answer as text in one code span, with what chat apps act on replaced, and nothing of it removed but the invisible.
    expect(body.replace(/^- [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z: /, '- ')).toBe("- answers `\uff20everyone [verify your account](https://evil.example/login) \u2039!channel\u203a lanigiro 'code' second line` (expected = expected words)");
    expect(body).not.toMatch(/[\u202a-\u202e\u2066-\u2069\n\r]|@/u);
    // The history keeps the answer as it came, quoted as JSON.
    const db = new DatabaseSync(join(dir, 'hostile.db'), { readOnly: true });
    const row = db.prepare('SELECT breaches FROM runs ORDER BY id LIMIT 1').get() as { breaches: string };
    db.close();
    expect((JSON.parse(row.breaches) as string[])[0]).toContain('@everyone');
  }, 60_000);

  it('a family that stops working: IPv6 through its own origin answers, then does not; one alert naming the state', async () => {
    const v6Port = await freePort();
    const v6 = await startTestServer({ PORT: String(v6Port), HOST: '::1', NETDIAG_RATE_LIMITS: 'ip=100000' });
    const port = await freePort();
    const main = await startTestServer({ PORT: String(port), HOST: '127.0.0.1', NETDIAG_RATE_LIMITS: 'ip=100000', NETDIAG_IPV4_URL: `http://127.0.0.1:${String(port)}`, NETDIAG_IPV6_URL: `http://[::1]:${String(v6Port)}` });
    const file = configFile('families', main.url, '  - name: both families\n    run: families\n    cron: "* * * * * *"\n    spread: 0s\n    expect: { ipv4: "= ok", ipv6: "= ok" }\n    alert_after: 2\n');
    const monitor = startMonitor(file);
    const runs = () => runLinesOf(monitor.lines, 'both families');
    try {
      await until('two runs with both families', () => runs().length >= 2, 30_000, monitor.lines);
      await v6.close();
      await until('the alert', () => noticesOf('both families').length >= 1, 40_000, monitor.lines);
    } finally {
      await stop(monitor);
      await main.close();
      await v6.close();
    }
    const [alert, ...more] = noticesOf('both families');
    expect(more).toEqual([]);
    expect(alert?.body.split('\n').map((l) => l.replace(/^- [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z: /, '- '))).toEqual(['- ipv6 `failed` (expected = ok)', '- ipv6 `failed` (expected = ok)']);
    expect(runs()[0]).toMatch(/: ipv4 ok, ipv6 ok, ipv4_ms [0-9.]+, ipv6_ms [0-9.]+$/);
  }, 120_000);

  it('a name that does not exist is an answer, its response code a figure (netdiag dns exits 3 for it, its JSON printed all the same)', async () => {
    const server = await startTestServer({ NETDIAG_DNS_UPSTREAM: `udp://127.0.0.1:${String(knot.port)}`, NETDIAG_RATE_LIMITS: 'dns=100000' });
    const file = configFile('nxdomain', server.url, '  - name: gone\n    run: dns\n    query: nothing-here.example.test\n    cron: "* * * * * *"\n    spread: 0s\n    expect: { response_code: "= name_error" }\n    alert_after: 1\n');
    const monitor = startMonitor(file);
    try {
      await until('two runs', () => runLinesOf(monitor.lines, 'gone').length >= 2, 30_000, monitor.lines);
    } finally {
      await stop(monitor);
      await server.close();
    }
    expect(runLinesOf(monitor.lines, 'gone')[0]).toBe(`netdiag monitor: gone on ${server.url}: response_code name_error, answers , answer_count 0`);
    expect(noticesOf('gone')).toEqual([]);
  }, 60_000);

  it("a latency check records the client's round trip to the server", async () => {
    const server = await startTestServer({ NETDIAG_RATE_LIMITS: 'probe=100000' });
    const file = configFile('latency', server.url, '  - name: round trip\n    run: latency\n    cron: "* * * * * *"\n    spread: 0s\n    expect: { client_to_api_rtt_ms: "< 1000" }\n');
    const monitor = startMonitor(file);
    try {
      await until('a run', () => runLinesOf(monitor.lines, 'round trip').length >= 1, 30_000, monitor.lines);
    } finally {
      await stop(monitor);
      await server.close();
    }
    const db = new DatabaseSync(join(dir, 'latency.db'), { readOnly: true });
    const row = db.prepare('SELECT ok, figures, breaches FROM runs ORDER BY id LIMIT 1').get() as { ok: number; figures: string; breaches: string };
    db.close();
    expect(row.ok).toBe(1);
    expect(JSON.parse(row.breaches), row.figures).toEqual([]);
    expect((JSON.parse(row.figures) as { client_to_api_rtt_ms: number }).client_to_api_rtt_ms).toBeGreaterThan(0);
  }, 60_000);
});
