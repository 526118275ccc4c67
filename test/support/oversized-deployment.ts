// A FAKE deployment that trusts the client to stop it: `/v1/ip` and `/.well-known/nq` send a body
// that never ends (chunked, as fast as the client reads), and the speed-test configuration asks for
// 2 GB a request. No real netdiag server does either on demand; the command line must bound both
// (issue 50).
import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface OversizedDeployment {
  url: string;
  close(): Promise<void>;
}

const meta = { request_id: '00000000-0000-4000-8000-000000000000', timestamp: '2025-01-01T00:00:00.000Z' };
const CHUNK = Buffer.alloc(64 * 1024, 0x20);

/** An opening brace, then spaces until the client goes away. */
function endless(res: ServerResponse): void {
  res.writeHead(200, { 'Content-Type': 'application/json' });
  res.write('{"data": ');
  const pump = (): void => {
    while (!res.destroyed && res.write(CHUNK));
    if (!res.destroyed) res.once('drain', pump);
  };
  pump();
}

export const HUGE_BYTES = 2_000_000_000;

export async function startOversizedDeployment(): Promise<OversizedDeployment> {
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path === '/v1/ip' || path === '/.well-known/nq') {
      endless(res);
      return;
    }
    if (path === '/v1/speed-test/configuration') {
      const measurements = [{ type: 'latency', packet_count: 2 }, { type: 'upload', bytes_per_request: HUGE_BYTES, request_count: 1 }];
      const data = {
        configuration_version: 1,
        execution: 'client',
        engine: '@provider/speedtest',
        results_persisted_by_service: false,
        metric_units: {},
        limits: { max_bytes_per_request: 1_000_000 },
        modes: [{ id: 'full', description: 'full', measurements }, { id: 'light', description: 'light', measurements }],
        analytics: { schema_version: 1, events: [], event_id: 'random_uuid_per_test', endpoint: '/v1/events' },
      };
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ data, meta }));
      return;
    }
    res.writeHead(404).end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${String(port)}`,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
