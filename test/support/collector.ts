// An analytics collector for the sink tests: a real HTTP server on loopback that records every
// NDJSON POST. Its behaviour can be switched while it runs: accept (204), fail (500), or hang
// (read the request and never answer). With a certificate it listens over HTTPS.
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';

export type CollectorMode = 'accept' | 'fail' | 'hang';

export interface Collector {
  url: string;
  mode: CollectorMode;
  /** Bodies of the POSTs answered 2xx, in order of arrival. */
  batches: string[];
  /** Every POST received, whatever it was answered. */
  attempts: number;
  /** The Authorization header of each POST received. */
  authorizations: (string | undefined)[];
  /** Every event delivered, parsed from the NDJSON lines. */
  events(): Record<string, unknown>[];
  close(): Promise<void>;
}

/**
 * `basicAuth` ("user:password") makes it refuse (401) any POST without those credentials, as a
 * collector behind authentication does; `tls` (a certificate and its key) serves it over HTTPS.
 */
export async function startCollector(mode: CollectorMode = 'accept', delayMs = 0, basicAuth?: string, tls?: { certFile: string; keyFile: string }): Promise<Collector> {
  const hanging = new Set<ServerResponse>();
  const collector: Collector = {
    url: '',
    mode,
    batches: [],
    attempts: 0,
    authorizations: [],
    events: () => collector.batches.flatMap((b) => b.split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as Record<string, unknown>)),
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    // What it received, for suites that cannot read this process's memory (workerd's).
    if (req.method === 'GET' && req.url === '/received') {
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ attempts: collector.attempts, events: collector.events() }));
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      collector.attempts += 1;
      collector.authorizations.push(req.headers.authorization);
      const answer = () => {
        if (basicAuth !== undefined && req.headers.authorization !== `Basic ${Buffer.from(basicAuth).toString('base64')}`) {
          res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="collector"' }).end();
          return;
        }
        if (collector.mode === 'hang') {
          hanging.add(res);
          return;
        }
        if (collector.mode === 'fail') {
          res.writeHead(500).end();
          return;
        }
        if (req.headers['content-type'] === 'application/x-ndjson') collector.batches.push(Buffer.concat(chunks).toString('utf8'));
        res.writeHead(204).end();
      };
      if (delayMs > 0) setTimeout(answer, delayMs);
      else answer();
    });
  };
  const server = tls === undefined ? createServer(handle) : createTlsServer({ cert: readFileSync(tls.certFile), key: readFileSync(tls.keyFile) }, handle);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  collector.url = `${tls === undefined ? 'http' : 'https'}://127.0.0.1:${String((server.address() as { port: number }).port)}/ingest`;
  return collector;
}
