// `netdiag speedtest -4 | -6 | --both` as a user runs them: the built CLI against the real server,
// whose family origins (NETDIAG_IPV4_URL, NETDIAG_IPV6_URL) are relays on 127.0.0.1 and ::1 that
// note each connection's client address and requests (connection-relay.ts): a family's run must
// reach the server over that family only, at its origin.
import { lookup } from 'node:dns/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliReport as Report } from '../support/cli-report.js';
import { runCli } from '../support/process.js';
import { LOOPBACK_TRANSFERS, startTestServer, type TestServer } from '../support/server.js';
import { freePort } from '../support/wait.js';
import { loadConnections, startConnectionRelay, type ConnectionRelay } from './connection-relay.js';

interface BothJson {
  ipv4: { url: string; report: Report };
  ipv6: { url: string; report: Report };
  differences: Record<'download' | 'upload', { ipv4_mbps: number; ipv6_mbps: number; ipv4_spread_mbps: [number, number]; ipv6_spread_mbps: [number, number]; beyond_spread: boolean } | null>;
  notes: string[];
}

let server: TestServer;
let four: ConnectionRelay;
let six: ConnectionRelay;
beforeAll(async () => {
  const port = await freePort();
  four = await startConnectionRelay('127.0.0.1', { host: '127.0.0.1', port });
  six = await startConnectionRelay('::1', { host: '127.0.0.1', port });
  server = await startTestServer({ PORT: String(port), NETDIAG_RATE_LIMITS: 'ip=1000', NETDIAG_IPV4_URL: four.url, NETDIAG_IPV6_URL: six.url, ...LOOPBACK_TRANSFERS });
});
afterAll(async () => {
  await four.close();
  await six.close();
  await server.close();
});

const speedtest = (extra: string[], url = server.url) => runCli(['speedtest', '--mode', 'light', '--no-packet-loss', '--no-analytics', '--url', url, ...extra], {}, 90_000);

/** The relays' connections made while `run` ran. */
async function seenDuring<T>(run: () => Promise<T>) {
  const [b4, b6] = [four.connections.length, six.connections.length];
  const result = await run();
  return { result, ipv4: four.connections.slice(b4), ipv6: six.connections.slice(b6) };
}

describe('netdiag speedtest over one family', () => {
  it('-6: the whole run goes to the IPv6 origin over IPv6, and none of it to the IPv4 origin', async () => {
    const { result, ipv4, ipv6 } = await seenDuring(() => speedtest(['--json', '-6']));
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(`netdiag: measuring IPv6 against ${six.url}, the deployment's IPv6 origin`);
    expect((JSON.parse(result.stdout) as Report).download_mbps).toBeGreaterThan(0);
    expect(ipv4).toEqual([]);
    expect(new Set(ipv6.map((c) => c.address))).toEqual(new Set(['::1']));
    expect(ipv6.flatMap((c) => c.requests)).toContain('GET /v1/speed-test/configuration');
    expect(loadConnections(ipv6, '/__down')).toHaveLength(4);
    expect(loadConnections(ipv6, '/__up')).toHaveLength(4);
  }, 60_000);

  it('-4 with --streams 1: the IPv4 origin, over IPv4, one load connection a direction', async () => {
    const { result, ipv4, ipv6 } = await seenDuring(() => speedtest(['--json', '-4', '--streams', '1']));
    expect(result.code, result.stderr).toBe(0);
    expect(ipv6).toEqual([]);
    expect(new Set(ipv4.map((c) => c.address))).toEqual(new Set(['127.0.0.1']));
    expect(loadConnections(ipv4, '/__down')).toHaveLength(1);
    expect(loadConnections(ipv4, '/__up')).toHaveLength(1);
  }, 60_000);
});

describe('netdiag speedtest --both', () => {
  it('runs the whole test over IPv4, then IPv6, each at its origin: one report a family and their comparison', async () => {
    const { result, ipv4, ipv6 } = await seenDuring(() => speedtest(['--json', '--both']));
    expect(result.code, result.stderr).toBe(0);
    const both = JSON.parse(result.stdout) as BothJson;
    expect(both.ipv4.url).toBe(four.url);
    expect(both.ipv6.url).toBe(six.url);
    for (const family of ['ipv4', 'ipv6'] as const) {
      expect(both[family].report.schema_version).toBe(1);
      expect(both[family].report.download_mbps).toBeGreaterThan(0);
      expect(both[family].report.upload_mbps).toBeGreaterThan(0);
    }
    // Each family's transfers reached the server over that family only.
    expect(new Set(ipv4.map((c) => c.address))).toEqual(new Set(['127.0.0.1']));
    expect(new Set(ipv6.map((c) => c.address))).toEqual(new Set(['::1']));
    expect(loadConnections(ipv4, '/__down')).toHaveLength(4);
    expect(loadConnections(ipv6, '/__down')).toHaveLength(4);
    // The comparison holds each figure as its report has it, and the spread around it.
    for (const direction of ['download', 'upload'] as const) {
      const d = both.differences[direction];
      expect(d).not.toBeNull();
      if (d === null) continue;
      expect(d.ipv4_mbps).toBeCloseTo(both.ipv4.report[`${direction}_mbps`] ?? 0, 1);
      expect(d.ipv6_mbps).toBeCloseTo(both.ipv6.report[`${direction}_mbps`] ?? 0, 1);
      expect(d.ipv4_spread_mbps[0]).toBeLessThanOrEqual(d.ipv4_spread_mbps[1]);
      const outside = (v: number, [lo, hi]: [number, number]) => v < lo || v > hi;
      expect(d.beyond_spread).toBe(outside(d.ipv4_mbps, d.ipv6_spread_mbps) && outside(d.ipv6_mbps, d.ipv4_spread_mbps));
      expect(both.notes.some((n) => n.startsWith(`the ${direction} differs`))).toBe(d.beyond_spread);
    }
  }, 90_000);

  it('in text: the families side by side, each with the origin it was measured against', async () => {
    const res = await speedtest(['--both']);
    expect(res.code, res.stderr).toBe(0);
    const lines = res.stdout.split('\n');
    expect(lines[0]).toMatch(/^ +IPv4 +IPv6$/);
    expect(lines[1]).toMatch(new RegExp(`^against +${four.url.replace(/[.[\]]/g, '\\$&')} +${six.url.replace(/[.[\]]/g, '\\$&')}$`));
    expect(lines[2]).toMatch(/^download +[0-9.]+ Mbps .* +[0-9.]+ Mbps /);
  }, 90_000);
});

describe('what cannot be measured over a family is said before anything is measured', () => {
  let bare: TestServer;
  beforeAll(async () => {
    // No family origins.
    bare = await startTestServer({ NETDIAG_RATE_LIMITS: 'ip=1000', ...LOOPBACK_TRANSFERS });
  });
  afterAll(() => bare.close());

  it('a --url address of the other family, with no origin for the family: bad usage (exit 2), naming it', async () => {
    const res = await speedtest(['-6'], bare.url);
    expect(res.code).toBe(2);
    expect(res.stderr).toBe(`error: ${bare.url}/ names an IPv4 address, which cannot be reached over IPv6, and the deployment names no IPv6 origin (GET /v1/ip/families) to measure IPv6 against\n`);
    const both = await speedtest(['--both'], bare.url);
    expect(both.code).toBe(2);
    expect(both.stdout).toBe('');
  });

  it('a host name with no address of the family and no origin for it: exit 1, naming the name and the family', async () => {
    // Whether `localhost` has an IPv6 address depends on this machine's hosts file: the test asks
    // the system resolver first and holds the command to what it says.
    const hasV6 = await lookup('localhost', { family: 6 }).then(
      () => true,
      () => false,
    );
    const res = await speedtest(['--json', '-6'], `http://localhost:${String(bare.port)}`);
    if (hasV6) {
      expect(res.code, res.stderr).toBe(0);
      return;
    }
    expect(res.code).toBe(1);
    expect(res.stderr).toBe('netdiag: cannot measure over IPv6: localhost has no IPv6 address (no AAAA record or hosts entry), so it cannot be asked over IPv6, and the deployment names no IPv6 origin (GET /v1/ip/families)\n');
    expect(res.stdout).toBe('');
  }, 60_000);
});
