// The metrics listener (NETDIAG_METRICS_PORT): GET /metrics in the Prometheus text format on
// its own port, loopback by default, apart from the API so the API's limits, CORS and public
// exposure never apply to it and a scraper never counts against a caller's limit.
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { failureReason } from '../../core/failure-reason.js';
import type { Logger } from '../../core/ports/logger.js';

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

interface Exposition {
  contentType: string;
  /** The metrics now; for the primary thread, every worker thread's, aggregated. */
  render(): Promise<string>;
}

export async function startMetricsServer(listen: { port: number; host: string }, exposition: Exposition, logger: Logger): Promise<MetricsServer> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics') {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Not found: metrics are at /metrics\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain; charset=utf-8' }).end('Method not allowed\n');
      return;
    }
    exposition.render().then(
      (body) => {
        res.writeHead(200, { 'Content-Type': exposition.contentType, 'Cache-Control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : body);
      },
      (err: unknown) => {
        // A worker thread that did not answer the primary in time.
        logger.warn({ reason: failureReason(err) }, 'metrics could not be collected');
        res.writeHead(503, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Metrics could not be collected; try again.\n');
      },
    );
  });
  // A scraper keeps one connection; a slow or stuck one is not held for ever.
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  try {
    // events.once rejects with the 'error' event's error, so a port in use lands in the catch.
    server.listen(listen.port, listen.host);
    await once(server, 'listening');
  } catch (err) {
    throw new Error(`the metrics listener could not open ${listen.host}:${String(listen.port)}: ${failureReason(err)}`, { cause: err });
  }
  const { port } = server.address() as AddressInfo;
  logger.info({ port, host: listen.host }, 'metrics listening');
  return {
    port,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
