// GET /port/N: with NETDIAG_PORT_CHECK=on, one TCP connection to the caller's own address, asked
// from a network namespace's ordinary unicast address across a veth pair, against a port that
// listens and one that does not; never to a special-use caller (loopback, private) or the host's
// own address, refused without a connection; off by default; bad ports, ?ip= and its own limit.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectContract } from '../support/contract.js';
import { curl } from '../support/curl.js';
import { canMakeNetns, createNetns, type Netns } from '../support/netns.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';

const run = promisify(execFile);
const haveCurl = requireCommands('port check', ['curl'], 'curl');
const namespaces = canMakeNetns() && requireCommands('port check from a namespace', ['ip'], 'iproute2');
if (!canMakeNetns()) {
  if (process.env.CI === 'true') throw new Error('port check suite: needs root for network namespaces; CI requires it');
  process.stderr.write('\n*** SKIPPED port check from a namespace: needs root for network namespaces ***\n\n');
}

/** A port on `host` that listens now, and one that listened a moment ago and no longer does. */
async function listeningAndClosed(host: string): Promise<{ server: Server; open: number; closed: number }> {
  const server = createServer((socket) => socket.end());
  server.listen(0, host);
  await once(server, 'listening');
  const gone = createServer();
  gone.listen(0, host);
  await once(gone, 'listening');
  const closed = (gone.address() as AddressInfo).port;
  await new Promise((resolve) => gone.close(resolve));
  return { server, open: (server.address() as AddressInfo).port, closed };
}

describe.skipIf(!haveCurl)('the port check', () => {
  let on: TestServer;
  let off: TestServer;
  let strict: TestServer;
  const at = (server: TestServer, host: string, path: string) => `http://${host}:${String(server.port)}${path}`;

  beforeAll(async () => {
    on = await startTestServer({ HOST: '::', NETDIAG_PORT_CHECK: 'on' });
    off = await startTestServer({ HOST: '::' });
    strict = await startTestServer({ NETDIAG_PORT_CHECK: 'on', NETDIAG_RATE_LIMITS: 'port=2' });
  });
  afterAll(async () => {
    await Promise.all([on.close(), off.close(), strict.close()]);
  });

  // Issue 50: behind a local proxy the server was not told to trust, every caller is 127.0.0.1,
  // and the check became a scanner of the host's own services (a Redis on loopback read
  // reachable). A special-use caller is refused, and nothing connects to the port.
  it.each([
    { family: 'IPv4', host: '127.0.0.1', url: '127.0.0.1', caller: '127.0.0.1' },
    { family: 'IPv6', host: '::1', url: '[::1]', caller: '::1' },
  ])('over $family loopback: 403 port_check_refused saying why and pointing at NETDIAG_TRUST_PROXY, with no connection made', async ({ host, url, caller }) => {
    const { server, open } = await listeningAndClosed(host);
    let connections = 0;
    server.on('connection', () => (connections += 1));
    try {
      const res = await curl(at(on, url, `/port/${String(open)}`), ['-g']);
      expect(res.status).toBe(403);
      expectContract('GET', '/port/{port}', res);
      expect(res.headers.get('cache-control')).toBe('no-store');
      expect(res.body).toMatchObject({
        code: 'port_check_refused',
        detail: `The port check connects to no special-use address, and the address this request comes from, ${caller}, is loopback. If this server sits behind a proxy, tunnel or address translation on its own host, its operator lists it in NETDIAG_TRUST_PROXY so that the caller's own address is used.`,
      });
      expect(connections).toBe(0);
    } finally {
      server.close();
    }
  });

  it('is off unless the operator turns it on: 404 saying how', async () => {
    const res = await curl(at(off, '127.0.0.1', '/port/22'));
    expect(res.status).toBe(404);
    expectContract('GET', '/port/{port}', res);
    expect(res.body).toMatchObject({ code: 'not_found', detail: 'The port check is off on this server; its operator turns it on with NETDIAG_PORT_CHECK=on.' });
  });

  it('takes ports 1 to 65535 only, and never another address: 400 naming what was wrong, before the limit', async () => {
    for (const bad of ['0', '65536', '99999', '022', '-1', 'ssh', '1e3', '%31']) {
      const res = await curl(at(strict, '127.0.0.1', `/port/${bad}`));
      expect([bad, res.status]).toEqual([bad, 400]);
      expectContract('GET', '/port/{port}', res);
      expect((res.body as { detail: string }).detail).toMatch(/^The port must be a whole number from 1 to 65535; got "[^"]+"\.$/);
    }
    const other = await curl(at(strict, '127.0.0.1', '/port/80?ip=192.0.2.1'));
    expect(other.status).toBe(400);
    expect(other.body).toMatchObject({ code: 'invalid_parameter', detail: 'The port check connects only to the address the request comes from; the query parameter "ip" is not accepted here.' });
    // None of those counted: the two checks the limit allows are still there (refused here, as a
    // loopback caller is, and counted: refusals are not a free way to ask).
    expect((await curl(at(strict, '127.0.0.1', '/port/1'))).status).toBe(403);
    expect((await curl(at(strict, '127.0.0.1', '/port/1'))).status).toBe(403);
    const over = await curl(at(strict, '127.0.0.1', '/port/1'));
    expect(over.status).toBe(429);
    expectContract('GET', '/port/{port}', over);
    expect(over.body).toMatchObject({ code: 'rate_limit_exceeded' });
  });

  describe.skipIf(!namespaces)("from a namespace's address across a veth pair", () => {
    let netns: Netns;
    let listener: ChildProcess;
    const openPort = 7022;
    const closedPort = 7023;

    let trusting: TestServer;

    beforeAll(async () => {
      // A caller that is not special-use, as a person forwarding a port on their router is.
      netns = createNetns({ globalUnicast: true });
      trusting = await startTestServer({ NETDIAG_PORT_CHECK: 'on', NETDIAG_TRUST_PROXY: 'loopback' });
      // A service inside the namespace, on its own address: what a forwarded port leads to.
      const argv = netns.exec([process.execPath, '-e', `require('net').createServer((s) => s.end()).listen(${String(openPort)}, '${netns.nsAddress}', () => console.log('up'))`]);
      listener = spawn(argv[0] ?? 'ip', argv.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
      await once(listener.stdout ?? listener, 'data');
    });
    afterAll(async () => {
      listener.kill();
      netns.destroy();
      await trusting.close();
    });

    it('connects back to that address: the listening port is reachable, the other not', async () => {
      const ask = async (port: number) => {
        const argv = netns.exec(['curl', '-sS', '-m', '10', `http://${netns.hostAddress}:${String(on.port)}/port/${String(port)}`]);
        const { stdout } = await run(argv[0] ?? 'ip', argv.slice(1));
        return JSON.parse(stdout) as unknown;
      };
      expect(await ask(openPort)).toEqual({ ip: netns.nsAddress, port: openPort, reachable: true });
      expect(await ask(closedPort)).toEqual({ ip: netns.nsAddress, port: closedPort, reachable: false });
    });

    it("refuses an address of the server's own host and a special-use one, even from a trusted proxy's header, connecting to neither", async () => {
      // The host's end of the veth pair is ordinary unicast space, and the host's own.
      const { server, open } = await listeningAndClosed(netns.hostAddress);
      let connections = 0;
      server.on('connection', () => (connections += 1));
      try {
        const own = await curl(at(trusting, '127.0.0.1', `/port/${String(open)}`), ['-H', `X-Forwarded-For: ${netns.hostAddress}`]);
        expect(own.status).toBe(403);
        expectContract('GET', '/port/{port}', own);
        expect(own.body).toMatchObject({
          code: 'port_check_refused',
          detail: `The port check connects to no address of this server's own host, and the address this request comes from, ${netns.hostAddress}, is one. If this server sits behind a proxy, tunnel or address translation on its own host, its operator lists it in NETDIAG_TRUST_PROXY so that the caller's own address is used.`,
        });
        const privateUse = await curl(at(trusting, '127.0.0.1', `/port/${String(open)}`), ['-H', 'X-Forwarded-For: 10.1.2.3']);
        expect(privateUse.status).toBe(403);
        expect((privateUse.body as { detail: string }).detail).toContain('10.1.2.3, is private-use (RFC 1918)');
        expect(connections).toBe(0);
      } finally {
        server.close();
      }
    });
  });
});
