import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { ProbeConfig } from './config.js';
import type { Logger } from '../../services.js';
import { LIMITS, listen, rejectClient } from './server.js';

/** The measurement request: the edge times one GET of this path over an open connection. */
export const PROBE_PATH = '/rtt';
/**
 * How long the probe holds an idle connection open. Far longer than the service's 5 s: the
 * edge keeps one connection per region open on purpose and exercises it every 15 s.
 */
export const PROBE_KEEP_ALIVE_MS = 75_000;

const HEALTH_BODY = JSON.stringify({ status: 'ok' });

function problem(res: ServerResponse, status: number, title: string, extra: Record<string, string> = {}): void {
  const body = JSON.stringify({ title, status });
  res.writeHead(status, {
    'Content-Type': 'application/problem+json',
    'Content-Length': String(Buffer.byteLength(body)),
    'Cache-Control': 'no-store',
    ...extra,
  });
  res.end(body);
}

/**
 * The probe's whole surface: `GET /rtt` answers 204 with no body (the least work there is, so
 * the figure is the network's and not ours), `GET /health` says it is up, everything else is
 * 404 or 405. No logging per request: it sees only the edge, and only as a timer.
 */
function probeListener(req: IncomingMessage, res: ServerResponse): void {
  const path = req.url ?? '/';
  if (path !== PROBE_PATH && path !== '/health') {
    problem(res, 404, 'Not found');
    return;
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    problem(res, 405, 'Method not allowed', { Allow: 'GET, HEAD' });
    return;
  }
  if (path === PROBE_PATH) {
    res.writeHead(204, { 'Cache-Control': 'no-store' });
    res.end();
    return;
  }
  res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': String(HEALTH_BODY.length), 'Cache-Control': 'no-store' });
  res.end(req.method === 'HEAD' ? undefined : HEALTH_BODY);
}

export interface RunningProbe {
  server: Server;
  port: number;
  /** Stops accepting and closes idle connections; in-flight replies (a few bytes each) finish. */
  drain(graceMs?: number): Promise<void>;
}

export async function startProbe(config: ProbeConfig, logger: Logger): Promise<RunningProbe> {
  const options = {
    maxHeaderSize: LIMITS.maxHeaderSize,
    headersTimeout: LIMITS.headersTimeoutMs,
    requestTimeout: LIMITS.requestTimeoutMs,
    keepAliveTimeout: PROBE_KEEP_ALIVE_MS,
  };
  const server =
    config.tls === undefined
      ? createHttpServer(options, probeListener)
      : createHttpsServer({ ...options, cert: config.tls.cert, key: config.tls.key, minVersion: 'TLSv1.2' }, probeListener);
  server.on('clientError', rejectClient);
  const port = await listen(server, config.port, config.host);
  logger.info({ port, host: config.host ?? null, tls: config.tls !== undefined, role: 'probe' }, 'listening');

  const drain = (graceMs = 5_000) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        server.closeAllConnections();
      }, graceMs);
      timer.unref();
      server.close(() => {
        clearTimeout(timer);
        resolve();
      });
      server.closeIdleConnections();
    });
  return { server, port, drain };
}
