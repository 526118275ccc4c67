// A FAKE InfluxDB 2.x write endpoint (/api/v2/write) for the monitor's InfluxDB outlet: Debian ships
// InfluxDB 1.x alone, which has no such path, so the 2.x request (its query, its token header, its
// body) is checked here. It keeps every request and answers 204 to the token it was given, 401
// (2.x's "unauthorized", its JSON error body) to any other.
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders } from 'node:http';

export interface FakeWrite {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface FakeInfluxdbV2 {
  url: string;
  writes: FakeWrite[];
  close(): Promise<void>;
}

export async function startFakeInfluxdbV2(token: string): Promise<FakeInfluxdbV2> {
  const writes: FakeWrite[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      writes.push({ method: req.method ?? '', path: url.pathname, query: url.searchParams, headers: req.headers, body });
      if (req.headers.authorization !== `Token ${token}`) {
        res.writeHead(401, { 'Content-Type': 'application/json' }).end(JSON.stringify({ code: 'unauthorized', message: 'unauthorized access' }));
        return;
      }
      res.writeHead(url.pathname === '/api/v2/write' ? 204 : 404).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${String((server.address() as { port: number }).port)}`,
    writes,
    close: () => new Promise((resolve) => server.close(() => { resolve(); })),
  };
}
