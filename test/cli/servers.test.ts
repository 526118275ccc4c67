// `netdiag servers` and `--server auto|NAME|URL` as a user runs them: the built CLI against three
// real netdiag servers held 5, 30 and 80 ms away by a delaying proxy that notes what each was
// asked (delayed-deployment.ts), a fourth listed one where nothing listens, and a fifth real
// server that lists them all (NETDIAG_SERVERS, GET /v1/servers).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ListedServer } from '../../src/common/servers.js';
import { readSpeedTestReport } from '../../src/common/speedtest/report-parse.js';
import { startDelayedDeployment, type DelayedDeployment } from './delayed-deployment.js';
import { runCli } from '../support/process.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { freePort } from '../support/wait.js';

interface Row {
  name: string;
  url: string;
  location: string;
  families: string[];
  round_trip_ms: number | null;
  reachable: boolean;
  error: string | null;
}

describe('netdiag servers and --server', () => {
  let near: DelayedDeployment;
  let mid: DelayedDeployment;
  let far: DelayedDeployment;
  let goneUrl: string;
  let list: DelayedDeployment;
  let unlisted: TestServer;
  /** What each deployment had been asked before a command: compared after it. */
  let asked: () => Record<string, string[]>;

  beforeAll(async () => {
    [near, mid, far] = await Promise.all([startDelayedDeployment(5), startDelayedDeployment(30), startDelayedDeployment(80)]);
    goneUrl = `http://127.0.0.1:${String(await freePort())}`;
    const entry = (name: string, url: string): ListedServer => ({ name, url, location: `${name} town`, families: ['ipv4'] });
    // Listed out of order: the order printed is the round trips'.
    list = await startDelayedDeployment(0, { NETDIAG_SERVERS: JSON.stringify([entry('far', far.url), entry('gone', goneUrl), entry('near', near.url), entry('mid', mid.url)]) });
    unlisted = await startTestServer();
    asked = () => ({ near: near.paths(), mid: mid.paths(), far: far.paths(), list: list.paths() });
  }, 30_000);
  afterAll(async () => {
    await Promise.all([near.close(), mid.close(), far.close(), list.close(), unlisted.close()]);
  });

  /** What each deployment was asked since `before`. */
  const since = (before: Record<string, string[]>) => Object.fromEntries(Object.entries(asked()).map(([k, v]) => [k, v.slice(before[k]?.length ?? 0)]));
  const trips = (n: number) => Array<string>(n).fill('/__down?bytes=0');

  it('netdiag servers --json: every listed server nearest first, the one that did not answer last and marked', async () => {
    const res = await runCli(['servers', '--json', '--url', list.url], {}, 20_000);
    expect(res.code, res.stderr).toBe(0);
    const rows = JSON.parse(res.stdout) as Row[];
    expect(rows.map((r) => r.name)).toEqual(['near', 'mid', 'far', 'gone']);
    expect(rows.slice(0, 3).map((r) => r.reachable)).toEqual([true, true, true]);
    // Each proxy holds an answer this long at least; how much longer the machine took is not asserted.
    expect(rows[0]?.round_trip_ms).toBeGreaterThanOrEqual(5);
    expect(rows[1]?.round_trip_ms).toBeGreaterThanOrEqual(30);
    expect(rows[2]?.round_trip_ms).toBeGreaterThanOrEqual(80);
    expect(rows[3]).toEqual({ name: 'gone', url: goneUrl, location: 'gone town', families: ['ipv4'], round_trip_ms: null, reachable: false, error: 'ECONNREFUSED' });
  });

  it('netdiag servers: the same as a table, the unreachable one marked', async () => {
    const res = await runCli(['servers', '--url', list.url], { NO_COLOR: '1' }, 20_000);
    expect(res.code, res.stderr).toBe(0);
    const lines = res.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^NAME +URL +LOCATION +FAMILIES +ROUND TRIP$/);
    expect(lines.slice(1).map((l) => l.split(' ')[0])).toEqual(['near', 'mid', 'far', 'gone']);
    expect(lines[1]).toMatch(/near town +ipv4 +[0-9.]+ ms$/);
    expect(lines[4]).toMatch(/gone town +ipv4 +unreachable: ECONNREFUSED$/);
  });

  it('--server auto runs the command against the nearest, and says which on standard error', async () => {
    const before = asked();
    const res = await runCli(['latency', '--server', 'auto', '--json', '--url', list.url], {}, 20_000);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toContain(`netdiag: the nearest server: near (${near.url}, `);
    const after = since(before);
    // Each listed server timed with the same round trips; the command's own requests went to the nearest alone.
    expect(after.mid).toEqual(trips(5));
    expect(after.far).toEqual(trips(5));
    expect(after.near?.slice(0, 5)).toEqual(trips(5));
    expect(after.near).toContain('/v1/latency/regions');
    expect(after.list).toEqual(['/v1/servers']);
  });

  it('--server NAME runs against that server, timing none', async () => {
    const before = asked();
    const res = await runCli(['watch', '--server', 'far', '--count', '1', '--json', '--url', list.url], {}, 20_000);
    expect(res.code, res.stderr).toBe(0);
    const after = since(before);
    expect(after.far?.length).toBeGreaterThan(0);
    expect(after.far).not.toContain('/__down?bytes=0');
    expect([after.near, after.mid]).toEqual([[], []]);
  });

  it('an unknown name is bad usage (exit 2) naming the servers listed, before anything is measured', async () => {
    const before = asked();
    const res = await runCli(['latency', '--server', 'nowhere', '--url', list.url], {}, 20_000);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(`error: unknown server "nowhere": ${list.url} lists "far", "gone", "near", "mid"`);
    expect(since(before)).toEqual({ near: [], mid: [], far: [], list: ['/v1/servers'] });
  });

  it('--server URL runs against that URL without asking for the list', async () => {
    const before = asked();
    const res = await runCli(['latency', '--server', mid.url, '--json', '--url', list.url], {}, 20_000);
    expect(res.code, res.stderr).toBe(0);
    const after = since(before);
    expect(after.mid).toContain('/v1/latency/regions');
    expect(after.list).toEqual([]);
  });

  it('--server auto against a deployment that lists none measures against that deployment, and says so', async () => {
    const res = await runCli(['latency', '--server', 'auto', '--json', '--url', unlisted.url], {}, 20_000);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toContain(`netdiag: ${unlisted.url} lists no servers: measuring against it`);
    expect(JSON.parse(res.stdout)).toHaveProperty('client_to_api_rtt_ms');
  });

  it('speedtest --server auto --json names the server measured against and the round trip that chose it; its requests went there alone', async () => {
    const before = asked();
    const res = await runCli(['speedtest', '--server', 'auto', '--mode', 'light', '--no-packet-loss', '--no-analytics', '--json', '--url', list.url], {}, 90_000);
    expect(res.code, res.stderr).toBe(0);
    const read = readSpeedTestReport(JSON.parse(res.stdout) as unknown);
    if (!read.ok) throw new Error(read.reason);
    expect(read.report.server).toEqual({ name: 'near', url: near.url, round_trip_ms: expect.any(Number) as unknown });
    expect(read.report.server?.round_trip_ms).toBeGreaterThanOrEqual(5);
    const after = since(before);
    expect(after.near?.some((p) => p.startsWith('/__up'))).toBe(true);
    expect([after.mid?.every((p) => p === '/__down?bytes=0'), after.far?.every((p) => p === '/__down?bytes=0')]).toEqual([true, true]);
  }, 100_000);

  it('speedtest --server NAME: the table names the server, with no round trip', async () => {
    const res = await runCli(['speedtest', '--server', 'mid', '--mode', 'light', '--no-packet-loss', '--no-analytics', '--url', list.url], { NO_COLOR: '1' }, 90_000);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout.split('\n')[0]).toMatch(new RegExp(`^server +mid \\(${mid.url.replace(/[.]/g, '\\.')}\\)$`));
  }, 100_000);

  it('rpm takes --server or --config, not both', async () => {
    const res = await runCli(['rpm', '--server', 'auto', '--config', `${near.url}/.well-known/nq`, '--url', list.url]);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/option '--server <server>' cannot be used with option '--config <url>'/);
  });
});

describe('--server with a family: the list says which families each server serves', () => {
  let v6only: DelayedDeployment;
  let dual: DelayedDeployment;
  let list: DelayedDeployment;
  beforeAll(async () => {
    [v6only, dual] = await Promise.all([startDelayedDeployment(5), startDelayedDeployment(30)]);
    // The nearer one listed as IPv6-only, by a host name (an address names its own family: a
    // deployment refuses a list that says otherwise): a test over IPv4 must not choose it.
    const listed: ListedServer[] = [
      { name: 'near6', url: v6only.url.replace('127.0.0.1', 'localhost'), location: 'near', families: ['ipv6'] },
      { name: 'dual', url: dual.url, location: 'mid', families: ['ipv4'] },
    ];
    list = await startDelayedDeployment(0, { NETDIAG_SERVERS: JSON.stringify(listed) });
  }, 30_000);
  afterAll(async () => {
    await Promise.all([v6only.close(), dual.close(), list.close()]);
  });

  it('a named server the list says lacks the family is bad usage (exit 2) saying which it serves, before it is sent anything', async () => {
    const res = await runCli(['speedtest', '-4', '--server', 'near6', '--mode', 'light', '--no-packet-loss', '--no-analytics', '--url', list.url], {}, 20_000);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('server "near6" serves IPv6 only');
    expect(res.stderr).toContain('not IPv4');
    expect(v6only.paths()).toEqual([]);
  });

  it('auto with -4 chooses among the servers that serve IPv4: the farther one, the nearer IPv6-only one not timed', async () => {
    const res = await runCli(['speedtest', '-4', '--server', 'auto', '--mode', 'light', '--no-packet-loss', '--no-analytics', '--json', '--url', list.url], {}, 90_000);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toContain(`netdiag: the nearest server: dual (${dual.url}, `);
    expect(v6only.paths()).toEqual([]);
  });
});
