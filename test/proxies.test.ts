// Real reverse proxies in front of the service (issue 17): Debian's nginx forwarding by
// X-Forwarded-For and by X-Real-IP (plain and terminating TLS with HTTP/2), HAProxy passing
// PROXY protocol v2 over TCP (plain and terminating TLS) and forwarding by X-Forwarded-For in
// HTTP mode. Clients are curl processes bound to their own loopback addresses (127.0.0.x), so
// "the client" and "the proxy" (127.0.0.1) are different addresses, as they are in production.
// The configurations are the README's examples ("Behind a reverse proxy").
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selfSignedCertificate } from './support/doh-relay.js';
import { startHaproxy, startNginx, type Proxy } from './support/proxies.js';
import { startTestServer, type TestServer } from './support/server.js';
import { requireCommands } from './support/system.js';
import { freePort } from './support/wait.js';

const ready = requireCommands('reverse proxies', ['nginx', 'haproxy', 'curl', 'openssl'], 'nginx haproxy curl openssl');

interface IpData {
  address: string;
  connection: { http_protocol: string | null; tls_version: string | null };
}

/** One request with curl from `from` (a loopback address of its own); `https` terminates at the proxy. */
async function curl(url: string, from: string, options: { headers?: Record<string, string>; http2?: boolean; tlsMax?: '1.2' | '1.3' } = {}): Promise<{ status: number; body: unknown }> {
  const args = ['-s', '-S', '--interface', from, '-o', '-', '-w', '\n%{http_code}'];
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

describe.skipIf(!ready)('behind real reverse proxies', () => {
  const servers: TestServer[] = [];
  const proxies: Proxy[] = [];
  let nginx: { plain: string; tls: string; realIp: string };
  let haproxy: { proxyV2: string; proxyV2Tls: string; http: string };

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

    proxies.push(
      await startNginx(
        `  upstream netdiag {
    server 127.0.0.1:${String(xff)};
    keepalive 8;
  }
  server {
    listen 127.0.0.1:${String(n1)};
    listen 127.0.0.1:${String(n2)} ssl http2;
    ssl_certificate ${cert.certFile};
    ssl_certificate_key ${cert.keyFile};
    location / {
      proxy_pass http://netdiag;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
    }
  }
  server {
    listen 127.0.0.1:${String(n3)};
    location / {
      proxy_pass http://127.0.0.1:${String(realIp)};
      proxy_set_header X-Real-IP $remote_addr;
    }
  }`,
        [n1, n2, n3],
      ),
    );
    proxies.push(
      await startHaproxy(
        `frontend netdiag_tcp
  mode tcp
  bind 127.0.0.1:${String(h1)}
  bind 127.0.0.1:${String(h2)} ssl crt ${pem} alpn http/1.1
  default_backend netdiag_proxy_v2
backend netdiag_proxy_v2
  mode tcp
  server netdiag 127.0.0.1:${String(proxyV2)} send-proxy-v2 proxy-v2-options ssl
frontend netdiag_http
  mode http
  bind 127.0.0.1:${String(h3)}
  option forwardfor
  default_backend netdiag_http
backend netdiag_http
  mode http
  server netdiag 127.0.0.1:${String(haproxyXff)}`,
        [h1, h2, h3],
      ),
    );
    nginx = { plain: `http://127.0.0.1:${String(n1)}`, tls: `https://127.0.0.1:${String(n2)}`, realIp: `http://127.0.0.1:${String(n3)}` };
    haproxy = { proxyV2: `http://127.0.0.1:${String(h1)}`, proxyV2Tls: `https://127.0.0.1:${String(h2)}`, http: `http://127.0.0.1:${String(h3)}` };
  }, 60_000);

  afterAll(async () => {
    for (const proxy of proxies) await proxy.close();
    for (const server of servers) await server.close();
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
});
