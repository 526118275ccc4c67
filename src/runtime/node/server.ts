import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createSecureServer, type Http2SecureServer, type Http2ServerRequest, type Http2ServerResponse, type Http2Session } from 'node:http2';
import type { AddressInfo, Server as NetServer } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Config } from './config.js';

export type Listener = (
  incoming: IncomingMessage | Http2ServerRequest,
  outgoing: ServerResponse | Http2ServerResponse,
) => void;

export type NodeServer = Server | Http2SecureServer;

/** Bounds that keep a slow or hostile client from holding resources (ARCHITECTURE.md §12). */
export const LIMITS = {
  /** Request header block, bytes: above it Node answers 431. */
  maxHeaderSize: 16 * 1024,
  /** Time to receive the complete header block. */
  headersTimeoutMs: 10_000,
  /** Time to receive the whole request. */
  requestTimeoutMs: 30_000,
  /** Idle time a keep-alive connection is held open between requests. */
  keepAliveTimeoutMs: 5_000,
} as const;

/**
 * A minimal problem document for requests Node rejects before the app sees them (malformed
 * request line, oversized headers): still JSON, still no internals.
 */
export function rejectClient(err: Error & { code?: string }, socket: Duplex): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const [status, title] =
    err.code === 'HPE_HEADER_OVERFLOW' ? [431, 'Request header fields too large'] : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? [408, 'Request timeout'] : [400, 'Bad request'];
  const body = JSON.stringify({ title, status, detail: 'The request could not be parsed.' });
  socket.end(
    `HTTP/1.1 ${status} ${title}\r\nContent-Type: application/problem+json\r\nCache-Control: no-store\r\n` +
      `Access-Control-Allow-Origin: *\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/** HTTP/1.1 by default; with TLS, HTTP/2 and HTTP/1.1 chosen by ALPN (RFC 7301). */
export function createNodeServer(config: Pick<Config, 'tls'>, listener: Listener): NodeServer {
  if (config.tls !== undefined) {
    const server = createSecureServer(
      {
        cert: config.tls.cert,
        key: config.tls.key,
        allowHTTP1: true,
        minVersion: 'TLSv1.2',
        maxSessionMemory: 10,
        settings: { maxHeaderListSize: LIMITS.maxHeaderSize },
      },
      listener,
    );
    server.setTimeout(LIMITS.requestTimeoutMs);
    return server;
  }
  const server = createServer(
    {
      maxHeaderSize: LIMITS.maxHeaderSize,
      headersTimeout: LIMITS.headersTimeoutMs,
      requestTimeout: LIMITS.requestTimeoutMs,
      keepAliveTimeout: LIMITS.keepAliveTimeoutMs,
    },
    listener,
  );
  server.on('clientError', rejectClient);
  return server;
}

/** Tracks HTTP/2 sessions so a drain can send each one GOAWAY (RFC 9113 §6.8). */
export function trackSessions(server: NodeServer): Set<Http2Session> {
  const sessions = new Set<Http2Session>();
  server.on('session', (session: Http2Session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
  });
  return sessions;
}

/** Listens and resolves with the bound port; a listen error (EADDRINUSE, EACCES) rejects. */
export async function listen(server: NetServer, port: number, host: string | undefined): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return (server.address() as AddressInfo).port;
}
