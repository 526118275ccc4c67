// Real reverse proxies in front of the service: Debian's nginx forwarding by
// X-Forwarded-For and by X-Real-IP (plain and terminating TLS with HTTP/2), HAProxy passing
// PROXY protocol v2 over TCP (plain and terminating TLS) and forwarding by X-Forwarded-For in
// HTTP mode. Clients are curl processes bound to their own loopback addresses (127.0.0.x), so
// "the client" and "the proxy" (127.0.0.1) are different addresses, as they are in production.
// The configurations are the files docs/proxies/ gives operators (docs/operations.md, "Behind a
// reverse proxy"), read from there with only addresses, ports and certificates replaced. HAProxy
// on a dual-stack bind (`bind :::PORT v4v6`), which writes IPv4 clients as `::ffff:a.b.c.d` in
// PROXY v1 and v2, and HAProxy's own headers that name no client: v1 UNKNOWN and v2 LOCAL for a
// client on a UNIX socket, v2 LOCAL for its health checks.
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selfSignedCertificate } from '../support/doh-relay.js';
import { documentedConfig } from '../support/documented-config.js';
import { startHaproxy, startHaproxyWith, startNginx, type Proxy } from '../support/proxies.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';
import { eventually, freePort } from '../support/wait.js';

const ready = requireCommands('reverse proxies', ['nginx', 'haproxy', 'curl', 'openssl'], 'nginx haproxy curl openssl');

interface IpData {
  address: string;
  ip_version: string;
  connection: { http_protocol: string | null; tls_version: string | null };
}

/**
 * One request with curl from `from` (a loopback address of its own), or through `unixSocket`
 * (a UNIX socket the proxy listens on; `from` is then unused); `https` terminates at the proxy.
 */
async function curl(url: string, from: string, options: { headers?: Record<string, string>; http2?: boolean; tlsMax?: '1.2' | '1.3'; unixSocket?: string } = {}): Promise<{ status: number; body: unknown }> {
  const args = ['-s', '-S', ...(options.unixSocket === undefined ? ['--interface', from] : ['--unix-socket', options.unixSocket]), '-o', '-', '-w', '\n%{http_code}'];
  if (url.startsWith('https:')) args.push('-k', ...(options.http2 === true ? ['--http2'] : ['--http1.1']), ...(options.tlsMax === undefined ? [] : ['--tls-max', options.tlsMax]));
  for (const [name, value] of Object.entries(options.headers ?? {})) args.push('-H', `${name}: ${value}`);
  // Asynchronous: the servers run in this process, and a synchronous child would block them.
  const { stdout } = await promisify(execFile)('curl', [...args, url], { encoding: 'utf8' });
  const cut = stdout.lastIndexOf('\n');
  const text = stdout.slice(0, cut);
  return { status: Number(stdout.slice(cut + 1)), body: text === '' ? null : (JSON.parse(text) as unknown) };
}

const ip = async (url: string, from: string, options: Parameters<typeof curl>[2] = {}) => {
  const res = await curl(`${url}/v1/ip`, from, options);
  return { status: res.status, data: (res.body as { data?: IpData }).data };
};

/** What HAProxy's stats socket reports for one server: `show stat` is CSV headed by `# pxname,svname,...`. */
async function haproxyServerStat(adminSocket: string, backend: string, server: string): Promise<Record<string, string> | undefined> {
  const socket = connect(adminSocket);
  await once(socket, 'connect');
  socket.end('show stat\n');
  let text = '';
  for await (const chunk of socket) text += (chunk as Buffer).toString();
  const [header = '', ...rows] = text.split('\n');
  const columns = header.replace(/^# /, '').split(',');
  const row = rows.map((line) => line.split(',')).find((cells) => cells[0] === backend && cells[1] === server);
  return row === undefined ? undefined : Object.fromEntries(columns.map((name, i) => [name, row[i] ?? '']));
}

describe.skipIf(!ready)('behind real reverse proxies', () => {
  const servers: TestServer[] = [];
  const proxies: Proxy[] = [];
  let nginx: { plain: string; tls: string; realIp: string };
  let haproxy: { proxyV2: string; proxyV2Tls: string; http: string };
  /** HAProxy on dual-stack binds and UNIX sockets, PROXY v1 (`send-proxy`) and v2, to one PROXY listener. */
  let dual: { v1: string; v2: string; capture: string; v1Socket: string; v2Socket: string; admin: string };
  /** The first line of each connection HAProxy made to a plain TCP server standing in for the service. */
  const captured: string[] = [];
  let capture: Server;
  let sockets: string;

  beforeAll(async () => {
    const cert = selfSignedCertificate();
    const pem = join(cert.certFile, '..', 'haproxy.pem');
    writeFileSync(pem, readFileSync(cert.certFile, 'utf8') + readFileSync(cert.keyFile, 'utf8'));
    // The proxies connect from 127.0.0.1, and only that address is trusted: a client on
    // 127.0.0.x is not a proxy, whatever headers it sends.
    const behind = async (env: Record<string, string>) => {
      const server = await startTestServer({ NETDIAG_TRUST_PROXY: '127.0.0.1', NETDIAG_RATE_LIMITS: 'ip=5', ...env });
      servers.push(server);
      return server.port;
    };
    const [xff, realIp, proxyV2, haproxyXff] = [await behind({}), await behind({ NETDIAG_TRUST_PROXY_HEADER: 'x-real-ip' }), await behind({ NETDIAG_PROXY_PROTOCOL: 'on' }), await behind({})];
    const [n1, n2, n3, h1, h2, h3] = [await freePort(), await freePort(), await freePort(), await freePort(), await freePort(), await freePort()];

    // The documented files (docs/proxies/), with only addresses, ports and certificates replaced.
    const certificates: [string, string][] = [
      ['/etc/ssl/netdiag.pem;', `${cert.certFile};`],
      ['/etc/ssl/netdiag.key;', `${cert.keyFile};`],
    ];
    const byForwardedFor = documentedConfig('nginx.conf', [
      ['server 127.0.0.1:8080;', `server 127.0.0.1:${String(xff)};`],
      ['listen 443 ssl http2;', `listen 127.0.0.1:${String(n1)};\n  listen 127.0.0.1:${String(n2)} ssl http2;`],
      ...certificates,
    ]);
    // The X-Real-IP variant the docs give: the same file with that one header line instead.
    const byRealIp = documentedConfig('nginx.conf', [
      ['upstream netdiag {', 'upstream netdiag_real_ip {'],
      ['proxy_pass http://netdiag;', 'proxy_pass http://netdiag_real_ip;'],
      ['server 127.0.0.1:8080;', `server 127.0.0.1:${String(realIp)};`],
      ['listen 443 ssl http2;', `listen 127.0.0.1:${String(n3)};`],
      ['proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;', 'proxy_set_header X-Real-IP $remote_addr;'],
      ...certificates,
    ]);
    proxies.push(await startNginx(`${byForwardedFor}\n${byRealIp}`, [n1, n2, n3]));
    proxies.push(
      await startHaproxyWith(
        documentedConfig('haproxy-tcp.cfg', [
          ['bind :443 ssl crt /etc/ssl/netdiag.pem', `bind 127.0.0.1:${String(h1)}\n  bind 127.0.0.1:${String(h2)} ssl crt ${pem}`],
          ['server netdiag 127.0.0.1:8080', `server netdiag 127.0.0.1:${String(proxyV2)}`],
        ]),
        [h1, h2],
      ),
    );
    proxies.push(
      await startHaproxyWith(
        documentedConfig('haproxy-http.cfg', [
          ['bind :80', `bind 127.0.0.1:${String(h3)}`],
          ['server netdiag 127.0.0.1:8080', `server netdiag 127.0.0.1:${String(haproxyXff)}`],
        ]),
        [h3],
      ),
    );

    // What HAProxy writes, seen by a plain TCP server: it answers every connection with a 204.
    capture = createServer((socket) => {
      socket.once('data', (chunk: Buffer) => {
        captured.push(chunk.toString('latin1').split('\r\n')[0] ?? '');
        socket.end('HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n');
      });
      socket.on('error', () => undefined);
    });
    capture.listen(0, '127.0.0.1');
    await once(capture, 'listening');
    const capturePort = (capture.address() as { port: number }).port;
    sockets = mkdtempSync(join(tmpdir(), 'netdiag-haproxy-sockets-'));
    const proxied = await behind({ NETDIAG_PROXY_PROTOCOL: 'on' });
    const [d1, d2, d3] = [await freePort(), await freePort(), await freePort()];
    proxies.push(
      await startHaproxy(
        `frontend netdiag_dual_v1
  mode tcp
  bind :::${String(d1)} v4v6
  bind unix@${sockets}/v1.sock
  default_backend netdiag_proxy_v1
frontend netdiag_dual_v2
  mode tcp
  bind :::${String(d2)} v4v6
  bind unix@${sockets}/v2.sock
  default_backend netdiag_proxy_v2
frontend netdiag_capture
  mode tcp
  bind :::${String(d3)} v4v6
  default_backend capture
backend netdiag_proxy_v1
  mode tcp
  server netdiag 127.0.0.1:${String(proxied)} send-proxy
backend netdiag_proxy_v2
  mode tcp
  server netdiag 127.0.0.1:${String(proxied)} send-proxy-v2
backend capture
  mode tcp
  server capture 127.0.0.1:${String(capturePort)} send-proxy
backend netdiag_checked
  mode http
  option httpchk GET /v1/health
  server netdiag 127.0.0.1:${String(proxied)} send-proxy-v2 check check-send-proxy inter 200ms`,
        [d1, d2, d3],
        `  stats socket ${sockets}/admin.sock level operator`,
      ),
    );
    dual = {
      v1: `http://127.0.0.1:${String(d1)}`,
      v2: `http://127.0.0.1:${String(d2)}`,
      capture: `http://127.0.0.1:${String(d3)}`,
      v1Socket: join(sockets, 'v1.sock'),
      v2Socket: join(sockets, 'v2.sock'),
      admin: join(sockets, 'admin.sock'),
    };
    nginx = { plain: `http://127.0.0.1:${String(n1)}`, tls: `https://127.0.0.1:${String(n2)}`, realIp: `http://127.0.0.1:${String(n3)}` };
    haproxy = { proxyV2: `http://127.0.0.1:${String(h1)}`, proxyV2Tls: `https://127.0.0.1:${String(h2)}`, http: `http://127.0.0.1:${String(h3)}` };
  }, 60_000);

  afterAll(async () => {
    for (const proxy of proxies) await proxy.close();
    for (const server of servers) await server.close();
    capture.close();
    rmSync(sockets, { recursive: true, force: true });
  });

  /**
   * The client is seen, a client-sent forwarding header does not win, and the ip limit (5 a
   * minute) counts the client: its sixth request is refused whatever it claims to be, while
   * another client through the same proxy still has its own window.
   */
  async function seesAndLimitsTheClient(url: string, client: string, other: string): Promise<void> {
    expect(await ip(url, client)).toMatchObject({ status: 200, data: { address: client } });
    const spoofs: Record<string, string>[] = [{ 'X-Forwarded-For': '203.0.113.66' }, { 'X-Real-IP': '203.0.113.67' }, { Forwarded: 'for=203.0.113.68' }, { 'X-Forwarded-For': `${other}, 203.0.113.69` }];
    for (const headers of spoofs) expect({ headers, ...(await ip(url, client, { headers })) }).toMatchObject({ headers, status: 200, data: { address: client } });
    const sixth = await ip(url, client, { headers: { 'X-Forwarded-For': '203.0.113.70' } });
    expect(sixth.status).toBe(429);
    expect(await ip(url, other)).toMatchObject({ status: 200, data: { address: other } });
  }

  it('nginx with X-Forwarded-For: the client is seen and limited; a spoofed header does not win', async () => {
    await seesAndLimitsTheClient(nginx.plain, '127.0.0.21', '127.0.0.22');
  });

  it('nginx terminating TLS (HTTP/2): the client is seen, and no protocol or TLS is reported, since the header carries none', async () => {
    const res = await ip(nginx.tls, '127.0.0.23', { http2: true });
    expect(res).toMatchObject({ status: 200, data: { address: '127.0.0.23', connection: { http_protocol: null, tls_version: null } } });
  });

  it('nginx with X-Real-IP (NETDIAG_TRUST_PROXY_HEADER=x-real-ip): the client is seen and limited; a client-sent X-Real-IP does not win', async () => {
    await seesAndLimitsTheClient(nginx.realIp, '127.0.0.31', '127.0.0.32');
  });

  it('HAProxy with PROXY protocol v2 over TCP: the client is seen and limited; forwarding headers are never read', async () => {
    await seesAndLimitsTheClient(haproxy.proxyV2, '127.0.0.41', '127.0.0.42');
  });

  it('HAProxy terminating TLS with PROXY protocol v2: the TLS version and protocol it passes are reported', async () => {
    // In TCP mode HAProxy relays the bytes as they come: it offers only http/1.1, which the
    // service's plain listener speaks (for HTTP/2 to clients, terminate in HTTP mode or let the
    // service hold the certificate).
    expect(await ip(haproxy.proxyV2Tls, '127.0.0.43', { tlsMax: '1.3' })).toMatchObject({ status: 200, data: { address: '127.0.0.43', connection: { http_protocol: 'HTTP/1.1', tls_version: 'TLSv1.3' } } });
    expect(await ip(haproxy.proxyV2Tls, '127.0.0.44', { tlsMax: '1.2' })).toMatchObject({ status: 200, data: { address: '127.0.0.44', connection: { http_protocol: 'HTTP/1.1', tls_version: 'TLSv1.2' } } });
    // Plain TCP: no TLS and no ALPN to pass.
    expect(await ip(haproxy.proxyV2, '127.0.0.45')).toMatchObject({ status: 200, data: { address: '127.0.0.45', connection: { http_protocol: null, tls_version: null } } });
  });

  it('HAProxy in HTTP mode with option forwardfor: the client is seen and limited; a spoofed header does not win', async () => {
    await seesAndLimitsTheClient(haproxy.http, '127.0.0.51', '127.0.0.52');
  });

  it('HAProxy on a dual-stack bind with PROXY v1 writes an IPv4 client as TCP6 ::ffff:a.b.c.d: the client is seen as IPv4 and limited', async () => {
    // What HAProxy really writes for a client reaching its `:::PORT v4v6` bind over 127.0.0.1.
    expect((await curl(dual.capture, '127.0.0.60')).status).toBe(204);
    const port = new URL(dual.capture).port;
    expect(captured.filter((line) => line.includes('127.0.0.60'))).toEqual([expect.stringMatching(new RegExp(`^PROXY TCP6 ::ffff:127\\.0\\.0\\.60 ::ffff:127\\.0\\.0\\.1 \\d+ ${port}$`))]);
    // The same through the service: a loopback caller, so reported as itself with no network.
    expect(await ip(dual.v1, '127.0.0.65')).toMatchObject({ status: 200, data: { address: '127.0.0.65', ip_version: 'ipv4' } });
    await seesAndLimitsTheClient(dual.v1, '127.0.0.61', '127.0.0.62');
  });

  it('HAProxy on a dual-stack bind with PROXY v2 (an IPv4-mapped INET6 source): the client is seen as IPv4 and limited', async () => {
    expect(await ip(dual.v2, '127.0.0.66')).toMatchObject({ status: 200, data: { address: '127.0.0.66', ip_version: 'ipv4' } });
    await seesAndLimitsTheClient(dual.v2, '127.0.0.63', '127.0.0.64');
  });

  it('HAProxy\'s UNKNOWN (v1) and LOCAL (v2) for a client on a UNIX socket: no caller (503 connection_unavailable), the client\'s forwarding headers never read', async () => {
    const headers = { 'X-Forwarded-For': '8.8.8.8', Forwarded: 'for=8.8.4.4', 'X-Real-IP': '9.9.9.9' };
    for (const unixSocket of [dual.v1Socket, dual.v2Socket]) {
      const res = await curl('http://netdiag.test/v1/ip', '', { headers, unixSocket });
      expect({ unixSocket, ...res }).toMatchObject({ unixSocket, status: 503, body: { code: 'connection_unavailable' } });
      expect(JSON.stringify(res.body)).not.toMatch(/8\.8\.8\.8|8\.8\.4\.4|9\.9\.9\.9/);
      // What needs no caller is still served.
      expect((await curl('http://netdiag.test/v1/health', '', { unixSocket })).status).toBe(200);
    }
  });

  it('HAProxy\'s health checks (v2 LOCAL, check-send-proxy) of /v1/health pass', async () => {
    let stat: Record<string, string> | undefined;
    // Checks run every 200 ms from start; wait for one to have completed, whatever its outcome.
    const checked = async () => {
      stat = await haproxyServerStat(dual.admin, 'netdiag_checked', 'netdiag');
      return stat?.check_status?.startsWith('L') === true;
    };
    expect(await eventually(checked, 10_000)).toBe(true);
    expect(stat).toMatchObject({ check_status: 'L7OK', check_code: '200', status: 'UP' });
  });
});
