// A DNS-over-HTTPS front (RFC 8484, POST) for the real Knot server, with a self-signed
// certificate made by openssl for 127.0.0.1. It relays each message to Knot over UDP unchanged.
import { execFileSync } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import dnsPacket from 'dns-packet';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface DohRelay {
  url: string;
  caFile: string;
  close(): Promise<void>;
}

/** Every certificate directory made in this process and not yet removed. */
const certificateDirs: string[] = [];

/**
 * Removes the certificates made so far: test/support/setup.ts calls it after each test file's
 * last test, since vitest ends its worker processes with a signal and no exit hook would run.
 */
export function removeCertificates(): void {
  for (const dir of certificateDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

export function selfSignedCertificate(): { certFile: string; keyFile: string } {
  const dir = mkdtempSync(join(tmpdir(), 'netdiag-cert-'));
  certificateDirs.push(dir);
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1',
      '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost', '-keyout', keyFile, '-out', certFile],
    { stdio: 'ignore' },
  );
  return { certFile, keyFile };
}

/**
 * Relays one DoH POST body to Knot over UDP and answers with Knot's reply. `fault` may answer
 * itself (true), let the query through (false) or hold it for a number of milliseconds first.
 */
function relay(upstreamPort: number, req: IncomingMessage, res: ServerResponse, fault?: (query: Buffer) => boolean | number): void {
  if (req.method !== 'POST' || req.url !== '/dns-query' || req.headers['content-type'] !== 'application/dns-message') {
    res.writeHead(400).end();
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const query = Buffer.concat(chunks);
    const verdict = fault?.(query) ?? false;
    if (verdict === true) return;
    const forward = () => {
      const socket = createSocket('udp4');
      socket.on('message', (message) => {
        socket.close();
        res.writeHead(200, { 'Content-Type': 'application/dns-message', 'Content-Length': message.length }).end(message);
      });
      socket.send(query, upstreamPort, '127.0.0.1');
    };
    if (verdict === false) forward();
    else setTimeout(forward, verdict);
  });
}

export async function startDohRelay(upstreamPort: number): Promise<DohRelay> {
  const { certFile, keyFile } = selfSignedCertificate();
  const server = createServer({ cert: readFileSync(certFile), key: readFileSync(keyFile) }, (req, res) => {
    relay(upstreamPort, req, res);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: `https://127.0.0.1:${port}/dns-query`,
    caFile: certFile,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

/** Milliseconds the front holds a question whose first label starts with `slow-`. */
export const SLOW_MS = 400;

/**
 * FAKE for the faults no real resolver produces on demand, over plain HTTP on loopback (the
 * Workers suites' upstream: workerd trusts no test certificate). It relays to Knot, except
 * for questions under `fault.test`, whose first label picks the fault: `http-503` (an HTTP
 * error), `garbage` (a 200 whose body is not a DNS message) and `silent` (no answer at all).
 * A question whose first label starts with `slow-` reaches Knot SLOW_MS late, so concurrent
 * requests overlap; `GET /queries?name=N` says how many queries for N the front has received.
 */
export async function startFaultyDohFront(upstreamPort: number): Promise<{ url: string; close(): Promise<void> }> {
  const silent = new Set<ServerResponse>();
  const received = new Map<string, number>();
  const server = createHttpServer((req, res) => {
    if (req.method === 'GET' && req.url?.startsWith('/queries?') === true) {
      const name = new URL(req.url, 'http://front').searchParams.get('name')?.toLowerCase() ?? '';
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ name, queries: received.get(name) ?? 0 }));
      return;
    }
    relay(upstreamPort, req, res, (query) => {
      const name = dnsPacket.decode(query).questions?.[0]?.name.toLowerCase() ?? '';
      received.set(name, (received.get(name) ?? 0) + 1);
      if (name.startsWith('slow-')) return SLOW_MS;
      if (!name.endsWith('.fault.test')) return false;
      const fault = name.split('.')[0];
      if (fault === 'http-503') res.writeHead(503).end();
      else if (fault === 'garbage') res.writeHead(200, { 'Content-Type': 'application/dns-message' }).end(Buffer.from('not a dns message'));
      else silent.add(res);
      return true;
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${String(port)}/dns-query`,
    close: async () => {
      for (const res of silent) res.destroy();
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
