// Address forms in a trusted forwarding header that name no real caller: IPv4-compatible IPv6
// (`::8.8.8.8`, deprecated by RFC 4291 §2.5.5.1; ipaddr.js even reads the dotted form as
// IPv4-mapped, so it was reported as 8.8.8.8) and a zone index (`8.8.8.8%eth0`, on IPv4 or a
// global IPv6 address, where none belongs; it was dropped and the rest taken). Both are now
// malformed entries: the chain breaks there, as for any unparsable entry. curl sends the
// proxy's header from the trusted loopback address 127.0.0.2. A link-local peer, whose socket
// address Node writes with its zone (`fe80::…%veth`), is still served: a network namespace
// joined by a veth pair with link-local addresses only.
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changingHostNetwork } from '../support/host-network-lock.js';
import { canMakeNetns } from '../support/netns.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';

const run = promisify(execFile);
const haveCurl = requireCommands('forwarded address forms', ['curl'], 'curl');

interface Answer {
  status: number;
  address: string | undefined;
  code: string | undefined;
}

/** GET /v1/ip with these header lines, through curl's extra arguments (`--interface` etc.). */
async function ask(url: string, headerLines: string[], curlArgs: string[] = ['--interface', '127.0.0.2'], wrap: (argv: string[]) => string[] = (a) => a): Promise<Answer> {
  const argv = wrap(['curl', '-sS', '-g', '-m', '10', ...curlArgs, '-w', '\n%{http_code}', ...headerLines.flatMap((h) => ['-H', h]), `${url}/v1/ip`]);
  const { stdout } = await run(argv[0] ?? 'curl', argv.slice(1));
  const cut = stdout.lastIndexOf('\n');
  const body = JSON.parse(stdout.slice(0, cut)) as { data?: { address: string }; code?: string };
  return { status: Number(stdout.slice(cut + 1)), address: body.data?.address, code: body.code };
}

const BROKEN = { status: 503, code: 'connection_unavailable', address: undefined };

describe.skipIf(!haveCurl)('a trusted header entry in a form that names no real caller breaks the chain', () => {
  let xff: TestServer;
  let forwarded: TestServer;
  let realIp: TestServer;
  beforeAll(async () => {
    const common = { NETDIAG_TRUST_PROXY: '127.0.0.2', NETDIAG_RATE_LIMITS: 'ip=1000' };
    xff = await startTestServer(common);
    forwarded = await startTestServer({ ...common, NETDIAG_TRUST_PROXY_HEADER: 'forwarded' });
    realIp = await startTestServer({ ...common, NETDIAG_TRUST_PROXY_HEADER: 'x-real-ip' });
  });
  afterAll(async () => {
    await Promise.all([xff.close(), forwarded.close(), realIp.close()]);
  });

  it.each([
    ['::8.8.8.8'],
    ['::808:808'],
    ['0:0:0:0:0:0:8.8.8.8'],
    ['8.8.8.8%eth0'],
    ['2001:db8::1%eth0'],
    ['::ffff:8.8.8.8%eth0'],
  ])('X-Forwarded-For: %s is refused (503), not read as an address', async (entry) => {
    expect(await ask(xff.url, [`X-Forwarded-For: ${entry}`])).toEqual(BROKEN);
  });

  it('the same forms in Forwarded and X-Real-IP', async () => {
    expect(await ask(forwarded.url, ['Forwarded: for="[::8.8.8.8]"'])).toEqual(BROKEN);
    expect(await ask(forwarded.url, ['Forwarded: for="8.8.8.8%eth0"'])).toEqual(BROKEN);
    expect(await ask(realIp.url, ['X-Real-IP: ::8.8.8.8'])).toEqual(BROKEN);
    expect(await ask(realIp.url, ['X-Real-IP: 8.8.8.8%eth0'])).toEqual(BROKEN);
  });

  it("a client's malformed entry left of the proxy's own is passed over: the proxy's entry is the caller", async () => {
    expect(await ask(xff.url, ['X-Forwarded-For: ::8.8.8.8, 9.9.9.9'])).toMatchObject({ status: 200, address: '9.9.9.9' });
    expect(await ask(xff.url, ['X-Forwarded-For: 8.8.8.8%eth0, 9.9.9.9'])).toMatchObject({ status: 200, address: '9.9.9.9' });
  });

  it('the forms that are addresses still are: IPv4-mapped as IPv4, loopback, a link-local zone', async () => {
    expect(await ask(xff.url, ['X-Forwarded-For: ::ffff:8.8.8.8'])).toMatchObject({ status: 200, address: '8.8.8.8' });
    expect(await ask(xff.url, ['X-Forwarded-For: ::1'])).toMatchObject({ status: 200, address: '::1' });
    expect(await ask(xff.url, ['X-Forwarded-For: fe80::1%eth0'])).toMatchObject({ status: 200, address: 'fe80::1' });
  });
});

describe.skipIf(!haveCurl || !canMakeNetns())('a link-local peer, whose socket address carries its zone', () => {
  const tag = randomBytes(3).toString('hex');
  const ns = `netdiag-ll-${tag}`;
  const hostSide = `ndlh${tag}`;
  const nsSide = `ndln${tag}`;
  const ip = (...args: string[]) => execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let server: TestServer | undefined;
  beforeAll(async () => {
    changingHostNetwork(() => {
      ip('netns', 'add', ns);
      ip('link', 'add', hostSide, 'type', 'veth', 'peer', 'name', nsSide);
      ip('link', 'set', nsSide, 'netns', ns);
      // Link-local addresses only, set by hand without duplicate address detection so they are
      // usable at once (the kernel's own would be tentative for a second or two).
      ip('link', 'set', hostSide, 'addrgenmode', 'none');
      ip('-n', ns, 'link', 'set', nsSide, 'addrgenmode', 'none');
      ip('addr', 'add', 'fe80::5eed:1/64', 'dev', hostSide, 'nodad');
      ip('-n', ns, 'addr', 'add', 'fe80::5eed:2/64', 'dev', nsSide, 'nodad');
      ip('link', 'set', hostSide, 'up');
      ip('-n', ns, 'link', 'set', nsSide, 'up');
    });
    server = await startTestServer({ HOST: `fe80::5eed:1%${hostSide}` });
  });
  afterAll(async () => {
    try {
      await server?.close();
    } finally {
      // This side's end of the pair at once: the namespace's own would go in the kernel's
      // deferred cleanup, after the lock is let go (test/support/host-network-lock.ts).
      changingHostNetwork(() => {
        ip('link', 'del', hostSide);
        ip('netns', 'del', ns);
      });
    }
  });

  it('is served with its address (the zone, naming our interface, dropped)', async () => {
    const url = `http://[fe80::5eed:1%25${nsSide}]:${String(server?.port)}`;
    const answer = await ask(url, [], [], (argv) => ['ip', 'netns', 'exec', ns, ...argv]);
    expect(answer).toMatchObject({ status: 200, address: 'fe80::5eed:2' });
  });
});
