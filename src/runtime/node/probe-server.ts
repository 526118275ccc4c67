import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { ProbeConfig } from './adapter/config.js';
import { randomUUID } from 'node:crypto';
import { detachedProblem } from '../../core/http/respond.js';
import type { ProblemCode } from '../../core/http/problems.js';
import { PROBE_PATH } from '../../core/ports/probe-client.js';
import { MAX_HEADER_BYTES, checkingInterval, clientErrorHandler, listen } from './adapter/server.js';
import type { Logger } from '../../core/ports/logger.js';

/**
 * How long the probe holds an idle connection open. Far longer than the service's 5 s: the
 * edge keeps one connection per region open on purpose and exercises it every 15 s.
 */
const PROBE_KEEP_ALIVE_MS = 75_000;

const HEALTH_BODY = JSON.stringify({ status: 'ok' });

/** A Host header we are willing to echo into problem `type` URIs. */
const SAFE_HOST = /^[A-Za-z0-9.-]+(?::[0-9]{1,5})?$|^\[[0-9A-Fa-f:.]+\](?::[0-9]{1,5})?$/;

/** A problem from the service's own catalogue, so the probe's errors read like the API's. */
function problem(req: IncomingMessage, res: ServerResponse, code: ProblemCode, detail: string, extra: string[] = []): void {
  const host = req.headers.host;
  const scheme = (req.socket as { encrypted?: boolean }).encrypted === true ? 'https' : 'http';
  const base = `${scheme}://${typeof host === 'string' && SAFE_HOST.test(host) ? host : 'localhost'}`;
  const reply = detachedProblem(code, detail, base, randomUUID());
  res.writeHead(reply.status, [...reply.headers, ...extra]);
  res.end(req.method === 'HEAD' ? undefined : reply.body);
}

/**
 * The probe's whole surface: `GET /rtt` answers 204 with no body (the least work there is, so
 * the figure is the network's and not ours), `GET /health` says it is up, everything else is
 * 404 or 405. No logging per request: it sees only the edge, and only as a timer.
 */
function probeListener(req: IncomingMessage, res: ServerResponse): void {
  const path = req.url ?? '/';
  if (path !== PROBE_PATH && path !== '/health') {
    problem(req, res, 'not_found', `The probe serves ${PROBE_PATH} and /health only.`);
    return;
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    problem(req, res, 'method_not_allowed', 'The probe answers GET and HEAD only.', ['Allow', 'GET, HEAD']);
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

interface RunningProbe {
  server: Server;
  port: number;
  /** Stops accepting and closes idle connections; in-flight replies (a few bytes each) finish. */
  drain(graceMs?: number): Promise<void>;
}

export async function startProbe(config: ProbeConfig, logger: Logger): Promise<RunningProbe> {
  const options = {
    maxHeaderSize: MAX_HEADER_BYTES,
    headersTimeout: config.timeouts.headersMs,
    requestTimeout: config.timeouts.requestMs,
    keepAliveTimeout: PROBE_KEEP_ALIVE_MS,
    connectionsCheckingInterval: checkingInterval(config.timeouts),
  };
  const server =
    config.tls === undefined
      ? createHttpServer(options, probeListener)
      : createHttpsServer({ ...options, cert: config.tls.cert, key: config.tls.key, minVersion: 'TLSv1.2', handshakeTimeout: config.timeouts.headersMs }, probeListener);
  server.on('clientError', clientErrorHandler(undefined));
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
