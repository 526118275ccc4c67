// `netdiag speedtest --streams N` and `--source ADDRESS` on the client commands, as a user runs
// them: the built CLI against the real server on loopback, through a relay that notes what the
// server's side of each connection sees (its client address and port, the requests on it). The
// whole of 127/8 is this host's (the loopback route), so 127.0.0.2 and others are real sources.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../support/process.js';
import { LOOPBACK_TRANSFERS, startTestServer, type TestServer } from '../support/server.js';
import type { CliReport as Report } from '../support/cli-report.js';
import { loadConnections, startConnectionRelay, type ConnectionRelay } from './connection-relay.js';

let server: TestServer;
let relay: ConnectionRelay;
beforeAll(async () => {
  server = await startTestServer({ NETDIAG_RATE_LIMITS: 'ip=1000', ...LOOPBACK_TRANSFERS });
  relay = await startConnectionRelay('127.0.0.1', { host: '127.0.0.1', port: server.port });
});
afterAll(async () => {
  await relay.close();
  await server.close();
});

/** The connections the relay accepted while `run` ran. */
async function seenDuring<T>(run: () => Promise<T>): Promise<{ result: T; seen: ConnectionRelay['connections'] }> {
  const before = relay.connections.length;
  const result = await run();
  return { result, seen: relay.connections.slice(before) };
}

const speedtest = (extra: string[]) => runCli(['speedtest', '--mode', 'light', '--no-packet-loss', '--no-analytics', '--url', relay.url, ...extra], {}, 60_000);

describe('netdiag speedtest --streams', () => {
  it('--streams 1: the server sees one load connection a direction, and the result names one stream', async () => {
    const { result, seen } = await seenDuring(() => speedtest(['--json', '--streams', '1']));
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout) as Report;
    expect(report.measured.download?.streams).toBe(1);
    expect(report.measured.upload?.streams).toBe(1);
    expect(loadConnections(seen, '/__down')).toHaveLength(1);
    expect(loadConnections(seen, '/__up')).toHaveLength(1);
    // The one stream carried the direction's transfers back to back, not one transfer.
    expect(loadConnections(seen, '/__down')[0]?.requests.filter((r) => r.startsWith('GET /__down') && !r.includes('bytes=0')).length).toBeGreaterThan(1);
  }, 60_000);

  it('--streams 3: three load connections a direction; the table says "3 streams", and "1 stream" for one', async () => {
    const { result, seen } = await seenDuring(() => speedtest(['--streams', '3']));
    expect(result.code, result.stderr).toBe(0);
    expect(loadConnections(seen, '/__down')).toHaveLength(3);
    expect(loadConnections(seen, '/__up')).toHaveLength(3);
    expect(result.stdout).toMatch(/^download +[0-9.]+ Mbps.*\(3 streams[,;]/m);
    const one = await speedtest(['--streams', '1']);
    expect(one.stdout).toMatch(/^upload +[0-9.]+ Mbps.*\(1 stream[,;]/m);
  }, 60_000);

  it('a stream count outside 1 to 16, or not a whole number, is bad usage (exit 2) naming the range', async () => {
    for (const bad of ['0', '17', '1.5', 'many']) {
      const res = await runCli(['speedtest', '--streams', bad, '--url', relay.url]);
      expect(res.code, bad).toBe(2);
      expect(res.stderr).toContain(`option '--streams <n>' argument '${bad}' is invalid. give a whole number of streams from 1 to 16`);
    }
  });
});

describe('--source on the client commands', () => {
  it('speedtest --source 127.0.0.2: every connection the server sees comes from that address, API calls and the load alike', async () => {
    const { result, seen } = await seenDuring(() => speedtest(['--json', '--streams', '2', '--source', '127.0.0.2']));
    expect(result.code, result.stderr).toBe(0);
    const requests = seen.flatMap((c) => c.requests);
    expect(requests).toContain('GET /v1/speed-test/configuration');
    expect(requests.some((r) => r.startsWith('GET /__down?bytes=0'))).toBe(true);
    expect(requests).toContain('POST /__up');
    expect(new Set(seen.map((c) => c.address))).toEqual(new Set(['127.0.0.2']));
    expect(loadConnections(seen, '/__down')).toHaveLength(2);
  }, 60_000);

  it('ip, dns, latency, config and watch --source: the server sees the source address', async () => {
    const ip = await seenDuring(() => runCli(['ip', '--json', '--source', '127.0.0.3', '--url', relay.url]));
    expect(ip.result.code, ip.result.stderr).toBe(0);
    expect(new Set(ip.seen.map((c) => c.address))).toEqual(new Set(['127.0.0.3']));
    // The server's own view, past the relay, is the relay's address; the relay saw the source.
    const direct = await runCli(['ip', '--json', '--source', '127.0.0.3', '--url', server.url]);
    expect(JSON.parse(direct.stdout)).toMatchObject({ address: '127.0.0.3' });
    const commands: [string, string[]][] = [
      ['config', ['config']],
      ['latency', ['latency']],
      ['watch', ['watch', '--count', '1', '--interval', '1']],
      ['dns', ['dns', 'example.com']],
    ];
    for (const [name, args] of commands) {
      const { result, seen } = await seenDuring(() => runCli([...args, '--json', '--source', '127.0.0.4', '--url', relay.url]));
      // dns answers 503 here (the tests' resolver is a closed port): the request was still sent.
      if (name !== 'dns') expect(result.code, `${name}: ${result.stderr}`).toBe(0);
      expect(seen.length, name).toBeGreaterThan(0);
      expect(new Set(seen.map((c) => c.address)), name).toEqual(new Set(['127.0.0.4']));
    }
    // latency's own timed round trips (five GET /v1/health) go through the bound client too.
    const { seen } = await seenDuring(() => runCli(['latency', '--json', '--source', '127.0.0.5', '--url', relay.url]));
    expect(seen.flatMap((c) => c.requests).filter((r) => r === 'GET /v1/health').length).toBeGreaterThanOrEqual(6);
    expect(new Set(seen.map((c) => c.address))).toEqual(new Set(['127.0.0.5']));
  }, 60_000);

  it('an address not on this host, or not an address, is bad usage (exit 2) said before anything is sent', async () => {
    const { result, seen } = await seenDuring(() => runCli(['speedtest', '--source', '198.51.100.77', '--url', relay.url]));
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^error: --source 198\.51\.100\.77 is not an address of this host \(its addresses: [^)]*127\.0\.0\.1/);
    expect(seen).toEqual([]);
    const word = await runCli(['ip', '--source', 'eth0', '--url', relay.url]);
    expect(word.code).toBe(2);
    expect(word.stderr).toContain("option '--source <address>' argument 'eth0' is invalid. give an IP address of this host");
  });

  it('a source of the other family than the --url address, or with --both, is bad usage (exit 2)', async () => {
    const { result, seen } = await seenDuring(() => runCli(['speedtest', '--source', '::1', '--url', relay.url]));
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`error: ${relay.url}/ names an IPv4 address, which cannot be reached over IPv6 (--source ::1 is an IPv6 address)\n`);
    expect(seen).toEqual([]);
    const six = await runCli(['speedtest', '-6', '--source', '127.0.0.2', '--url', relay.url]);
    expect(six.code).toBe(2);
    expect(six.stderr).toContain('--source 127.0.0.2 is an IPv4 address: it cannot connect over IPv6');
    const both = await runCli(['speedtest', '--both', '--source', '127.0.0.2', '--url', relay.url]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("option '--both' cannot be used with option '--source <address>'");
  });
});

describe('--source with the server list', () => {
  let lister: TestServer;
  beforeAll(async () => {
    // A deployment whose list names the relayed server: the round trips that time it pass the relay.
    lister = await startTestServer({ NETDIAG_SERVERS: JSON.stringify([{ name: 'relayed', url: relay.url, location: 'loopback' }]) });
  });
  afterAll(() => lister.close());

  it.each([
    ['servers', ['servers', '--json'], '127.0.0.6'],
    ['latency --server auto', ['latency', '--server', 'auto', '--json'], '127.0.0.7'],
  ])('%s: the round trips that time the listed servers come from the source', async (_name, args, source) => {
    const { result, seen } = await seenDuring(() => runCli([...args, '--source', source, '--url', lister.url], {}, 30_000));
    expect(result.code, result.stderr).toBe(0);
    expect(seen.flatMap((c) => c.requests).filter((r) => r === 'GET /__down?bytes=0')).toHaveLength(5);
    expect(new Set(seen.map((c) => c.address))).toEqual(new Set([source]));
  });

  it('-6 with an IPv4 --source is refused (exit 2) before the list is asked or a server timed', async () => {
    const { result, seen } = await seenDuring(() => runCli(['speedtest', '-6', '--source', '127.0.0.8', '--server', 'auto', '--url', lister.url], {}, 30_000));
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--source 127.0.0.8 is an IPv4 address');
    expect(result.stderr).not.toContain('the nearest server');
    expect(seen).toEqual([]);
  });
});
