// A FAKE responsiveness server (HTTPS with HTTP/2) for the faults no real server produces on
// demand: a configuration that is not one, and a large download that sends its head and then
// nothing. Test-only; the real endpoints are src/features/speedtest/responsiveness.ts.
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createSecureServer, type Http2SecureServer } from 'node:http2';
import type { AddressInfo } from 'node:net';

export interface FakeRpmServer {
  origin: string;
  /** Every request's path, as it came. */
  requests: string[];
  close(): Promise<void>;
}

/**
 * Serves `config` (a value to send as JSON, or a raw string) at /.well-known/nq, one byte at
 * /small, and at /large a 200 with a huge Content-Length and then no byte; /limited a 429 with
 * Retry-After, as a server's rate limit refuses; /upload reads and never answers.
 */
export async function startFakeRpmServer(cert: { certFile: string; keyFile: string }, config: (origin: string) => unknown): Promise<FakeRpmServer> {
  let origin = '';
  const requests: string[] = [];
  // The compatibility API, so the configuration answers HTTP/1.1 (fetch) and HTTP/2 alike.
  const server: Http2SecureServer = createSecureServer({ cert: readFileSync(cert.certFile), key: readFileSync(cert.keyFile), allowHTTP1: true }, (req, res) => {
    res.on('error', () => undefined);
    requests.push(req.url);
    if (req.url === '/.well-known/nq') {
      const value = config(origin);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(typeof value === 'string' ? value : JSON.stringify(value));
    } else if (req.url === '/small') {
      res.writeHead(200, { 'content-length': '1' });
      res.end('0');
    } else if (req.url === '/limited') {
      res.writeHead(429, { 'content-type': 'application/problem+json', 'retry-after': '30' });
      res.end(JSON.stringify({ title: 'Too many requests', status: 429 }));
    } else if (req.url === '/large') {
      // The head, then nothing: a stalled server.
      res.writeHead(200, { 'content-length': String(8 * 1024 ** 3) });
    } else {
      req.on('data', () => undefined);
    }
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  origin = `https://127.0.0.1:${String((server.address() as AddressInfo).port)}`;
  return {
    origin,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
        // Sessions a client left open would hold close() forever.
        setTimeout(resolve, 1_000).unref();
      }),
  };
}
