// `netdiag ip -4 | -6 | --both` as a user runs them: the built CLI against one real server that
// listens on 127.0.0.1 and ::1, its family origins set or not; and an IPv6 origin in a namespace
// whose blackhole route swallows the answers (a broken family).
import { lookup } from 'node:dns/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Schemas } from '../../src/generated/openapi-types.js';
import { FAMILY_TIMEOUT_MS } from '../../src/common/families.js';
import { canMakeNetns, createBlackhole, type Blackhole } from '../support/netns.js';
import { runCli } from '../support/process.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { freePort } from '../support/wait.js';

type IpData = Schemas['CallerIpData'];

interface BothJson {
  ipv4: { url: string; state: string; ms: number | null; ip: IpData | null; error: string | null };
  ipv6: { url: string; state: string; ms: number | null; ip: IpData | null; error: string | null };
  verdict: string;
}

const namespaces = canMakeNetns();
if (!namespaces && process.env.CI === 'true') throw new Error('the CLI dual-stack suite needs root for its namespace; CI requires it');

/** A server on both families; `origins` are its NETDIAG_IPV4_URL and NETDIAG_IPV6_URL, given its port. */
async function serverOn(origins?: (port: number) => { v4: string; v6: string }): Promise<TestServer> {
  const port = await freePort();
  const set = origins?.(port);
  return startTestServer({ PORT: String(port), HOST: '::', NETDIAG_RATE_LIMITS: 'ip=1000', ...(set === undefined ? {} : { NETDIAG_IPV4_URL: set.v4, NETDIAG_IPV6_URL: set.v6 }) });
}

describe('netdiag ip over one address family', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await serverOn();
  });
  afterAll(() => server.close());
  const v4 = () => `http://127.0.0.1:${String(server.port)}`;
  const v6 = () => `http://[::1]:${String(server.port)}`;

  it('-4 and -6 connect over that family and the server sees an address of it', async () => {
    const four = await runCli(['ip', '-4', '--json', '--url', v4()]);
    expect(four.code, four.stderr).toBe(0);
    expect(JSON.parse(four.stdout)).toMatchObject({ address: '127.0.0.1', ip_version: 'ipv4' });
    const six = await runCli(['ip', '-6', '--json', '--url', v6()]);
    expect(six.code, six.stderr).toBe(0);
    expect(JSON.parse(six.stdout)).toMatchObject({ address: '::1', ip_version: 'ipv6' });
  });

  it('an address of the other family in --url is bad usage (exit 2), named', async () => {
    const res = await runCli(['ip', '-4', '--url', v6()]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain(`error: ${v6()}/ names an IPv6 address, which cannot be reached over IPv4`);
    const other = await runCli(['ip', '-6', '--url', v4()]);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('names an IPv4 address, which cannot be reached over IPv6');
    const both = await runCli(['ip', '-4', '-6', '--url', v4()]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("option '-4, --ipv4' cannot be used with option '-6, --ipv6'");
  });

  it('a host name with no address of the family is a clear failure (exit 1), not a hang or a stack trace', async () => {
    // Whether `localhost` has an IPv6 address depends on this machine's hosts file: the test asks
    // the system resolver first and holds the command to what it says.
    const hasV6 = await lookup('localhost', { family: 6 }).then(
      () => true,
      () => false,
    );
    const res = await runCli(['ip', '-6', '--json', '--url', `http://localhost:${String(server.port)}`]);
    if (hasV6) {
      expect(res.code, res.stderr).toBe(0);
      expect(JSON.parse(res.stdout)).toMatchObject({ ip_version: 'ipv6' });
    } else {
      expect(res.code).toBe(1);
      expect(res.stderr).toBe('netdiag: localhost has no IPv6 address (no AAAA record or hosts entry), so it cannot be asked over IPv6\n');
    }
  });

  it('--both with a host name that has no IPv6 address says so of the name, not "no IPv6 on this connection"', async () => {
    // As above, the machine's resolver decides whether `localhost` has an IPv6 address.
    const hasV6 = await lookup('localhost', { family: 6 }).then(
      () => true,
      () => false,
    );
    const url = `http://localhost:${String(server.port)}`;
    const text = await runCli(['ip', '--both', '--url', url]);
    const json = await runCli(['ip', '--both', '--json', '--url', url]);
    expect(text.code, text.stderr).toBe(0);
    const found = JSON.parse(json.stdout) as BothJson;
    if (hasV6) {
      expect(found.verdict).toBe('both');
      return;
    }
    expect(text.stdout).not.toContain('no IPv6 on this connection');
    expect(text.stdout).toMatch(/^IPv6 +not checked \(localhost has no IPv6 address: no AAAA record or hosts entry\) via http:\/\/localhost:\d+$/m);
    expect(text.stdout).toMatch(/^verdict +IPv4 works; IPv6 was not checked: localhost has no IPv6 address: no AAAA record or hosts entry\.$/m);
    expect(found.ipv6).toMatchObject({ state: 'unchecked', ip: null, error: 'localhost has no IPv6 address (no AAAA record or hosts entry), so it cannot be asked over IPv6' });
    expect(found.verdict).toBe('partial');
  });

  it('--both without advertised origins asks the URL over each family it can reach', async () => {
    const res = await runCli(['ip', '--both', '--json', '--url', v4()]);
    expect(res.code, res.stderr).toBe(0);
    const found = JSON.parse(res.stdout) as BothJson;
    expect(found.ipv4).toMatchObject({ url: v4(), state: 'ok', ip: { address: '127.0.0.1' } });
    // An IPv4 address reaches only IPv4: the other family is not checked, and says why.
    expect(found.ipv6).toMatchObject({ state: 'unchecked', ip: null });
    expect(found.ipv6.error).toContain('names an IPv4 address');
    expect(found.verdict).toBe('partial');
  });
});

describe('netdiag ip --both through the deployment\'s family origins', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await serverOn((port) => ({ v4: `http://127.0.0.1:${String(port)}`, v6: `http://[::1]:${String(port)}` }));
  });
  afterAll(() => server.close());

  it('asks each advertised origin over its family and prints both objects and the verdict', async () => {
    const res = await runCli(['ip', '--both', '--json', '--url', server.url]);
    expect(res.code, res.stderr).toBe(0);
    const found = JSON.parse(res.stdout) as BothJson;
    expect(found.ipv4).toMatchObject({ url: `http://127.0.0.1:${String(server.port)}`, state: 'ok', ip: { address: '127.0.0.1', ip_version: 'ipv4' }, error: null });
    expect(found.ipv6).toMatchObject({ url: `http://[::1]:${String(server.port)}`, state: 'ok', ip: { address: '::1', ip_version: 'ipv6' }, error: null });
    expect(found.verdict).toBe('both');
  });

  it('in text: a line per family and the verdict', async () => {
    const res = await runCli(['ip', '--both', '--url', server.url]);
    expect(res.code, res.stderr).toBe(0);
    const lines = res.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(new RegExp(`^IPv4 +127\\.0\\.0\\.1 \\(network unknown; answered in [0-9.]+ (ms|s)\\) via http://127\\.0\\.0\\.1:${String(server.port)}$`));
    expect(lines[1]).toMatch(new RegExp(`^IPv6 +::1 \\(network unknown; answered in [0-9.]+ (ms|s)\\) via http://\\[::1\\]:${String(server.port)}$`));
    expect(lines[2]).toBe('verdict  Both: IPv4 and IPv6 work.');
  });
});

describe.skipIf(!namespaces)('netdiag ip --both with a broken IPv6 origin', () => {
  let hole: Blackhole;
  let server: TestServer;
  beforeAll(async () => {
    hole = createBlackhole();
    server = await serverOn((port) => ({ v4: `http://127.0.0.1:${String(port)}`, v6: `http://[${hole.address}]:${String(port)}` }));
  });
  afterAll(async () => {
    await server.close();
    hole.destroy();
  });

  it('names IPv6 broken after the family deadline and still exits 0 with the IPv4 answer', async () => {
    const started = Date.now();
    const res = await runCli(['ip', '--both', '--json', '--url', server.url], {}, FAMILY_TIMEOUT_MS * 5);
    const took = Date.now() - started;
    expect(res.code, res.stderr).toBe(0);
    const found = JSON.parse(res.stdout) as BothJson;
    expect(found.ipv6).toMatchObject({ state: 'timeout', ip: null });
    expect(found.ipv6.ms).toBeGreaterThanOrEqual(FAMILY_TIMEOUT_MS);
    expect(found.ipv4).toMatchObject({ state: 'ok', ip: { address: '127.0.0.1' } });
    expect(found.verdict).toBe('ipv6-broken');
    // The command ends with its answer: no connection attempt outlives the deadline it gave up at.
    expect(took).toBeLessThan(FAMILY_TIMEOUT_MS * 2);
  }, FAMILY_TIMEOUT_MS * 6);

  it('with neither family answering, exit 1 with the verdict', async () => {
    const closed = await freePort();
    const other = await startTestServer({ HOST: '::', NETDIAG_IPV4_URL: `http://127.0.0.1:${String(closed)}`, NETDIAG_IPV6_URL: `http://[${hole.address}]:${String(closed)}` });
    try {
      const res = await runCli(['ip', '--both', '--url', other.url], {}, FAMILY_TIMEOUT_MS * 5);
      expect(res.code).toBe(1);
      expect(res.stderr).toMatch(/^netdiag: neither family answered: Neither family answered/);
      expect(res.stderr).not.toMatch(/\n\s+at /);
    } finally {
      await other.close();
    }
  }, FAMILY_TIMEOUT_MS * 6);
});
