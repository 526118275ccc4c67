import { randomUUID } from 'node:crypto';
import { STATUS_CODES, Server as HttpServer, createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { constants as h2, createSecureServer, type Http2SecureServer, type Http2ServerRequest, type Http2ServerResponse, type Http2Session, type IncomingHttpHeaders, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo, Server as NetServer, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { detachedProblem, headerPairs } from '../../../core/http/respond.js';
import type { ProblemCode } from '../../../core/http/problems.js';
import type { Config, ListenerTimeouts } from './config.js';

/**
 * `expectsContinue`: the client sent `Expect: 100-continue` and no `100 Continue` has gone out;
 * the listener sends it only when the route asks for the body (RFC 9110 §10.1.1).
 */
type Listener = (
  incoming: IncomingMessage | Http2ServerRequest,
  outgoing: ServerResponse | Http2ServerResponse,
  expectsContinue?: boolean,
) => void;

export type NodeServer = HttpServer | Http2SecureServer;

/**
 * Request header block, bytes. HTTP/1: Node answers 431 above it. HTTP/2: it is announced as
 * SETTINGS_MAX_HEADER_LIST_SIZE, which Node applies only once the client has acknowledged it
 * (resetting a larger stream with ENHANCE_YOUR_CALM); before that, in the client's first flight,
 * Node's own 64 KiB applies and `refuseLargeHeaderLists` answers 431.
 */
export const MAX_HEADER_BYTES = 16 * 1024;
/**
 * Streams one HTTP/2 connection may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS). RFC 9113
 * §6.5.2 advises no less than 100; Node's default is 2^32-1, which lets one connection hold any
 * number of request bodies open.
 */
const MAX_CONCURRENT_STREAMS = 100;

/**
 * How often Node checks connections against the header and request deadlines. Its default,
 * 30 s, lets a 10 s header deadline act after up to 40 s: checking every second (or a quarter
 * of a short deadline) keeps the bound within a second of what is configured, for the cost of
 * one walk over the connection list.
 */
export function checkingInterval(timeouts: ListenerTimeouts): number {
  return Math.max(25, Math.min(1_000, Math.floor(timeouts.headersMs / 4)));
}

const HEADER_OVERFLOW = `The request's header block is over ${MAX_HEADER_BYTES} bytes.`;

const REJECTIONS: Record<string, [ProblemCode, string]> = {
  HPE_HEADER_OVERFLOW: ['header_fields_too_large', HEADER_OVERFLOW],
  ERR_HTTP_REQUEST_TIMEOUT: ['request_timeout', 'The request did not arrive whole within the deadline.'],
};

/** The address the client connected to, as an origin: for a request whose headers are not read. */
function localOrigin(socket: Duplex): string {
  const local = socket as Duplex & Partial<Pick<Socket, 'localAddress' | 'localPort' | 'localFamily'>> & { encrypted?: boolean };
  const host = local.localFamily === 'IPv6' ? `[${local.localAddress ?? '::1'}]` : (local.localAddress ?? '127.0.0.1');
  return `${local.encrypted === true ? 'https' : 'http'}://${host}:${String(local.localPort ?? 0)}`;
}

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
    const reply = detachedProblem(code, detail, publicUrl ?? localOrigin(socket), randomUUID());
    const lines = [`HTTP/1.1 ${String(reply.status)} ${STATUS_CODES[reply.status] ?? ''}`];
    for (let i = 0; i < reply.headers.length; i += 2) lines.push(`${reply.headers[i] ?? ''}: ${reply.headers[i + 1] ?? ''}`);
    lines.push('Connection: close', '', reply.body ?? '');
    socket.end(lines.join('\r\n'));
  };
}

/**
 * How much a client may send on an HTTP/2 stream, and on a connection, before this server has
 * read it (RFC 9113 §6.9). The protocol's default, 64 KiB for both, holds an upload to 64 KiB a
 * round trip: 10 Mbit/s at 50 ms, however fast the link, and every stream of a browser's
 * connection shares it. 1 MiB a stream and 8 MiB a connection let a 20 ms path carry 400 Mbit/s
 * on one stream; what is held unread stays within the session memory bound (maxSessionMemory).
 */
const STREAM_WINDOW = 1024 * 1024;
const CONNECTION_WINDOW = 8 * 1024 * 1024;
/** The protocol's initial window, of a stream and of the connection (RFC 9113 §6.9.2). */
const DEFAULT_WINDOW = 65_535;

/** The paths whose sessions keep the protocol's default windows (`sizeWindows`). */
type DefaultWindowPaths = (path: string) => boolean;

/**
 * A session gets the wide windows above unless it carries a request for one of
 * `defaultWindowPaths` (the responsiveness endpoints): there a wide window lets the client queue
 * that much upload in its own send buffer, ahead of the self probe it sends on the same
 * connection, and draft-ietf-ippm-responsiveness asks servers to add no such queueing to the
 * probes. New SETTINGS lower every open stream's window, the sender's included (RFC 9113
 * §6.9.2). A connection window once granted cannot be taken back (WINDOW_UPDATE only adds,
 * §6.9.1; lowering it only withholds updates until the client has spent it), so it is granted at
 * the session's first stream, once its path shows which kind of session this is. Prepended, so
 * it runs before the request's listener reads the body.
 */
function sizeWindows(session: Http2Session, defaultWindowPaths: DefaultWindowPaths): void {
  let windows: 'undecided' | 'wide' | 'default' = 'undecided';
  session.prependListener('stream', (_stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => {
    if (windows === 'default' || session.destroyed) return;
    if (defaultWindowPaths((headers[':path'] ?? '').split('?')[0] ?? '')) {
      session.settings({ initialWindowSize: DEFAULT_WINDOW });
      if (windows === 'wide') session.setLocalWindowSize(DEFAULT_WINDOW);
      windows = 'default';
    } else if (windows === 'undecided') {
      session.setLocalWindowSize(CONNECTION_WINDOW);
      windows = 'wide';
    }
  });
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
      // A stream that moves nothing either way (a download its client stopped reading, held by
      // flow control) is cancelled after the stall bound, whatever else the session carries.
      stream.setTimeout(timeouts.stallMs, () => {
        if (!stream.destroyed) stream.close(h2.NGHTTP2_CANCEL);
      });
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
 * The size of an HTTP/2 request's field section as RFC 9113 §6.5.2 counts it for
 * SETTINGS_MAX_HEADER_LIST_SIZE: each field line's name and value in octets plus 32, the
 * pseudo-header fields included. Node hands HTTP/2 field names and values over as one-byte
 * (Latin-1) strings, so a string's length is its octet count.
 */
function headerListSize(rawHeaders: readonly string[]): number {
  let size = 0;
  for (let i = 0; i < rawHeaders.length; i++) size += (rawHeaders[i] ?? '').length;
  // Names and values alternate: 32 per field line is 16 per entry.
  return size + 16 * rawHeaders.length;
}

/**
 * Enforces MAX_HEADER_BYTES on HTTP/2 requests that Node lets through: a setting takes effect for
 * its sender only when the peer acknowledges it (RFC 9113 §6.5.3), so Node holds streams the
 * client opens before acknowledging our SETTINGS (its first flight: every new connection's first
 * request) to nghttp2's default of 64 KiB instead. Such a larger field section is answered 431
 * with the problem document, as HTTP/1 is, before the app sees it. RFC 9113 §10.5.1 allows a 431
 * or a refused stream; the 431 says what was wrong, whereas REFUSED_STREAM tells the client the
 * request was not processed and may be retried as it is (§8.7), which would only repeat it. The
 * field block was decoded whole, so HPACK state stays consistent and the connection usable.
 * A client that sends a larger block after acknowledging the bound has its stream reset by Node
 * (ENHANCE_YOUR_CALM) before any request exists.
 */
function refuseLargeHeaderLists(listener: Listener, publicUrl: string | undefined): Listener {
  return (incoming, outgoing, expectsContinue) => {
    if (incoming.httpVersionMajor < 2 || headerListSize(incoming.rawHeaders) <= MAX_HEADER_BYTES) {
      listener(incoming, outgoing, expectsContinue);
      return;
    }
    const reply = detachedProblem('header_fields_too_large', HEADER_OVERFLOW, publicUrl ?? localOrigin(incoming.socket), randomUUID());
    (outgoing as Http2ServerResponse).writeHead(reply.status, Object.fromEntries(headerPairs(reply.headers)));
    outgoing.end(reply.body ?? '');
  };
}

/**
 * Routes a request that carries `Expect: 100-continue` to the listener without Node's automatic
 * `100 Continue` (which it sends before the app has looked at the request whenever no
 * `checkContinue` listener exists): a declared length over the bound, a wrong media type or an
 * exhausted limit is then answered at once with its final status and no body is invited
 * (RFC 9110 §10.1.1). Node then closes the HTTP/1.1 connection after the reply, since the body
 * may still follow. Both HTTP/1.1 and HTTP/2 requests arrive through this event.
 */
function deferContinue(server: NodeServer, listener: Listener): void {
  server.on('checkContinue', (incoming: IncomingMessage | Http2ServerRequest, outgoing: ServerResponse | Http2ServerResponse) => {
    listener(incoming, outgoing, true);
  });
}

/**
 * HTTP/1.1 by default; with TLS, HTTP/2 and HTTP/1.1 chosen by ALPN (RFC 7301). Every kind of
 * connection gets the same bounds (docs/design.md): header block size, header and request
 * deadlines, keep-alive time, the stall bound, and on HTTP/2 the stream limit and per-stream
 * deadline and stall bound. An HTTP/2 session that asks for one of `defaultWindowPaths` keeps the
 * protocol's default flow-control windows (`sizeWindows`).
 */
export function createNodeServer(config: Pick<Config, 'tls' | 'timeouts' | 'publicUrl'>, appListener: Listener, defaultWindowPaths: DefaultWindowPaths): NodeServer {
  const { timeouts } = config;
  const onClientError = clientErrorHandler(config.publicUrl);
  if (config.tls !== undefined) {
    const listener = refuseLargeHeaderLists(appListener, config.publicUrl);
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
        settings: { maxHeaderListSize: MAX_HEADER_BYTES, maxConcurrentStreams: MAX_CONCURRENT_STREAMS, initialWindowSize: STREAM_WINDOW },
      },
      listener,
    );
    // HTTP/1.1 over TLS runs Node's HTTP/1 connection handling, which reads these from the
    // server; left alone they are 60 s, 300 s, no keep-alive bound and a 30 s check.
    const http1 = server as unknown as { headersTimeout: number; requestTimeout: number; keepAliveTimeout: number; connectionsCheckingInterval: number; maxHeaderSize: number; requireHostHeader: boolean };
    http1.headersTimeout = timeouts.headersMs;
    http1.requestTimeout = timeouts.requestMs;
    http1.keepAliveTimeout = timeouts.keepAliveMs;
    http1.connectionsCheckingInterval = checkingInterval(timeouts);
    http1.maxHeaderSize = MAX_HEADER_BYTES;
    http1.requireHostHeader = false;
    // A socket of either protocol that moves nothing either way for the stall bound is closed:
    // an HTTP/1.1 download whose client stopped reading, or a whole HTTP/2 session so stalled.
    server.setTimeout(timeouts.stallMs);
    server.on('clientError', onClientError);
    deferContinue(server, listener);
    boundHttp2Sessions(server, timeouts);
    server.on('session', (session: Http2Session) => {
      sizeWindows(session, defaultWindowPaths);
    });
    return server;
  }
  const listener = appListener;
  const server = createServer(
    {
      maxHeaderSize: MAX_HEADER_BYTES,
      headersTimeout: timeouts.headersMs,
      requestTimeout: timeouts.requestMs,
      keepAliveTimeout: timeouts.keepAliveMs,
      connectionsCheckingInterval: checkingInterval(timeouts),
      // Node's own check answers a bare 400 with no problem document or request id; the
      // listener makes the same check (RFC 9112 §3.2) and answers it as every other 400.
      requireHostHeader: false,
    },
    listener,
  );
  // The same stall bound as TLS: without it, a download whose client stopped reading held its
  // socket, and megabytes of the host's TCP memory, for as long as the client kept it open.
  server.setTimeout(timeouts.stallMs);
  server.on('clientError', onClientError);
  deferContinue(server, listener);
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
export async function listen(server: NetServer, port: number, host: string | undefined, reusePort = false): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // SO_REUSEPORT for a worker thread: its siblings bind the same port (Node 22.12+).
    server.listen({ port, host, reusePort }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return (server.address() as AddressInfo).port;
}
