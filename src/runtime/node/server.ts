import { randomUUID } from 'node:crypto';
import { STATUS_CODES, Server as HttpServer, createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { constants as h2, createSecureServer, type Http2SecureServer, type Http2ServerRequest, type Http2ServerResponse, type Http2Session, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo, Server as NetServer, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { detachedProblem } from '../../http/respond.js';
import type { ProblemCode } from '../../http/problems.js';
import type { Config, ListenerTimeouts } from './config.js';

export type Listener = (
  incoming: IncomingMessage | Http2ServerRequest,
  outgoing: ServerResponse | Http2ServerResponse,
) => void;

export type NodeServer = HttpServer | Http2SecureServer;

/** Request header block, bytes: above it Node answers 431 (HTTP/1) or refuses the stream (HTTP/2). */
export const MAX_HEADER_BYTES = 16 * 1024;
/**
 * Streams one HTTP/2 connection may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS). RFC 9113
 * §6.5.2 advises no less than 100; Node's default is 2^32-1, which lets one connection hold any
 * number of request bodies open.
 */
export const MAX_CONCURRENT_STREAMS = 100;

/**
 * How often Node checks connections against the header and request deadlines. Its default,
 * 30 s, lets a 10 s header deadline act after up to 40 s: checking every second (or a quarter
 * of a short deadline) keeps the bound within a second of what is configured, for the cost of
 * one walk over the connection list.
 */
export function checkingInterval(timeouts: ListenerTimeouts): number {
  return Math.max(25, Math.min(1_000, Math.floor(timeouts.headersMs / 4)));
}

const REJECTIONS: Record<string, [ProblemCode, string]> = {
  HPE_HEADER_OVERFLOW: ['header_fields_too_large', `The request's header block is over ${MAX_HEADER_BYTES} bytes.`],
  ERR_HTTP_REQUEST_TIMEOUT: ['request_timeout', 'The request did not arrive whole within the deadline.'],
};

/**
 * The problem for a request Node refuses before the app sees it (a malformed request line,
 * oversized headers, a missed deadline), from the one catalogue: a `type` on the public URL,
 * else on the address the client connected to (its Host header was never parsed).
 */
export function clientErrorHandler(publicUrl: string | undefined): (err: Error & { code?: string }, socket: Duplex) => void {
  return (err, socket) => {
    if (!socket.writable || err.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    const [code, detail] = REJECTIONS[err.code ?? ''] ?? ['malformed_request', 'The request could not be parsed as HTTP.'];
    const local = socket as Duplex & Partial<Pick<Socket, 'localAddress' | 'localPort' | 'localFamily'>> & { encrypted?: boolean };
    const host = local.localFamily === 'IPv6' ? `[${local.localAddress ?? '::1'}]` : (local.localAddress ?? '127.0.0.1');
    const base = publicUrl ?? `${local.encrypted === true ? 'https' : 'http'}://${host}:${String(local.localPort ?? 0)}`;
    const reply = detachedProblem(code, detail, base, randomUUID());
    const lines = [`HTTP/1.1 ${String(reply.status)} ${STATUS_CODES[reply.status] ?? ''}`];
    for (let i = 0; i < reply.headers.length; i += 2) lines.push(`${reply.headers[i] ?? ''}: ${reply.headers[i + 1] ?? ''}`);
    lines.push('Connection: close', '', reply.body ?? '');
    socket.end(lines.join('\r\n'));
  };
}

/**
 * HTTP/2 bounds Node does not have: a session must complete a request's headers within the
 * header deadline of opening, and is closed after the keep-alive time with no stream open (a
 * client dripping CONTINUATION frames never completes a stream, so this bounds it as well); a
 * stream must deliver its whole request within the request deadline, else it is cancelled.
 */
function boundHttp2Sessions(server: Http2SecureServer, timeouts: ListenerTimeouts): void {
  server.on('session', (session: Http2Session) => {
    let open = 0;
    let idle: NodeJS.Timeout | undefined;
    const closeAfter = (ms: number) => {
      clearTimeout(idle);
      idle = setTimeout(() => {
        session.destroy();
      }, ms).unref();
    };
    closeAfter(timeouts.headersMs);
    session.on('stream', (stream: ServerHttp2Stream) => {
      open += 1;
      clearTimeout(idle);
      const deadline = stream.endAfterHeaders
        ? undefined
        : setTimeout(() => {
            if (!stream.destroyed) stream.close(h2.NGHTTP2_CANCEL);
          }, timeouts.requestMs).unref();
      // The deadline covers receiving the request; once its body has ended the reply is ours.
      stream.once('end', () => {
        clearTimeout(deadline);
      });
      stream.once('close', () => {
        clearTimeout(deadline);
        open -= 1;
        if (open === 0 && !session.destroyed) closeAfter(timeouts.keepAliveMs);
      });
    });
    session.once('close', () => {
      clearTimeout(idle);
    });
  });
}

/**
 * HTTP/1.1 by default; with TLS, HTTP/2 and HTTP/1.1 chosen by ALPN (RFC 7301). Every kind of
 * connection gets the same bounds (ARCHITECTURE.md §12): header block size, header and request
 * deadlines, keep-alive time, and on HTTP/2 the stream limit and per-stream deadline.
 */
export function createNodeServer(config: Pick<Config, 'tls' | 'timeouts' | 'publicUrl'>, listener: Listener): NodeServer {
  const { timeouts } = config;
  const onClientError = clientErrorHandler(config.publicUrl);
  if (config.tls !== undefined) {
    const server = createSecureServer(
      {
        cert: config.tls.cert,
        key: config.tls.key,
        allowHTTP1: true,
        minVersion: 'TLSv1.2',
        // A client that never finishes its handshake is held no longer than one that never
        // finishes its headers (Node's default is 120 s).
        handshakeTimeout: timeouts.headersMs,
        maxSessionMemory: 10,
        settings: { maxHeaderListSize: MAX_HEADER_BYTES, maxConcurrentStreams: MAX_CONCURRENT_STREAMS },
      },
      listener,
    );
    // HTTP/1.1 over TLS runs Node's HTTP/1 connection handling, which reads these from the
    // server; left alone they are 60 s, 300 s, no keep-alive bound and a 30 s check.
    const http1 = server as unknown as { headersTimeout: number; requestTimeout: number; keepAliveTimeout: number; connectionsCheckingInterval: number; maxHeaderSize: number };
    http1.headersTimeout = timeouts.headersMs;
    http1.requestTimeout = timeouts.requestMs;
    http1.keepAliveTimeout = timeouts.keepAliveMs;
    http1.connectionsCheckingInterval = checkingInterval(timeouts);
    http1.maxHeaderSize = MAX_HEADER_BYTES;
    // Idle sockets of either protocol: a backstop behind the bounds above.
    server.setTimeout(timeouts.requestMs);
    server.on('clientError', onClientError);
    boundHttp2Sessions(server, timeouts);
    return server;
  }
  const server = createServer(
    {
      maxHeaderSize: MAX_HEADER_BYTES,
      headersTimeout: timeouts.headersMs,
      requestTimeout: timeouts.requestMs,
      keepAliveTimeout: timeouts.keepAliveMs,
      connectionsCheckingInterval: checkingInterval(timeouts),
    },
    listener,
  );
  server.on('clientError', onClientError);
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

/**
 * Closes every HTTP/1 connection, idle or not. An HTTP/2 server with `allowHTTP1` tracks its
 * HTTP/1 connections in the same list as `http.Server` but offers no method for this one, so
 * `http.Server`'s is borrowed.
 */
export function closeAllHttp1(server: NodeServer): void {
  HttpServer.prototype.closeAllConnections.call(server as HttpServer);
}

/** Closes the HTTP/1 connections that carry no request now (same borrowing as above). */
export function closeIdleHttp1(server: NodeServer): void {
  HttpServer.prototype.closeIdleConnections.call(server as HttpServer);
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
