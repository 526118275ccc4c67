import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import { randomUUID } from 'node:crypto';
import type { App } from '../../../app/app.js';
import { drainStreamBody } from '../../../core/http/bounded-read.js';
import { detachedProblem, headerPairs } from '../../../core/http/respond.js';
import type { BodyBytes, BodyDrained, HttpReply, HttpRequest, StreamedBody } from '../../../core/http/types.js';
import type { ConnectionFacts } from '../../../core/http/connection.js';
import { nodeConnection } from './connection.js';
import { readNodeBody } from './read-body.js';
import type { Logger } from '../../../core/ports/logger.js';

type Incoming = IncomingMessage | Http2ServerRequest;
type Outgoing = ServerResponse | Http2ServerResponse;

/** A Host header we are willing to echo into problem `type` URIs. */
const SAFE_HOST = /^[A-Za-z0-9.-]+(?::[0-9]{1,5})?$|^\[[0-9A-Fa-f:.]+\](?::[0-9]{1,5})?$/;

/**
 * A Host field value as RFC 9112 §3.2 defines it: `uri-host [ ":" port ]`, the host an IP literal
 * in brackets or a reg-name (RFC 3986 §3.2.2: unreserved, percent-encoded and sub-delims), possibly
 * empty; the port digits.
 */
const HOST_FIELD = /^(?:\[[0-9A-Za-z:._~!$&'()*+,;=-]+\]|[A-Za-z0-9._~%!$&'()*+,;=-]*)(?::[0-9]*)?$/;

/** An absolute-form request target (RFC 9112 §3.2.2): `http(s)://authority` and the rest. */
const ABSOLUTE_FORM = /^https?:\/\/([^/?#]*)([^#]*)/i;

/**
 * Why an HTTP/1 request's Host field must be refused (RFC 9112 §3.2: "A server MUST respond with
 * a 400 … to any HTTP/1.1 request message that lacks a Host header field and to any request
 * message that contains more than one Host header field line or a Host header field with an
 * invalid field value"), or undefined. Node keeps only the first of repeated Host lines in
 * `headers`, so the raw lines are counted.
 */
function hostFault(incoming: Incoming): string | undefined {
  let count = 0;
  const raw = incoming.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] ?? '';
    if (name.length === 4 && name.toLowerCase() === 'host') count += 1;
  }
  if (count > 1) return 'The request has more than one Host header field.';
  const host = incoming.headers.host;
  if (host === undefined) return incoming.httpVersionMinor >= 1 ? 'An HTTP/1.1 request must carry a Host header field.' : undefined;
  return HOST_FIELD.test(host) ? undefined : 'The Host header field is not a host name or address with an optional port.';
}

/**
 * The core's request over `IncomingMessage`. A class rather than an object of closures: one
 * allocation per request on the hottest path, the methods shared on the prototype.
 */
class NodeRequest implements HttpRequest {
  readonly method: string;
  readonly path: string;
  readonly query: string;

  /**
   * @param awaitingContinue the response on which `100 Continue` is still owed (the client sent
   * `Expect: 100-continue`), else undefined. It is sent when a route asks for the body, so a
   * request refused before that (413 on its declared length, 415, 429) gets its final status
   * without inviting a body it will not read (RFC 9110 §10.1.1).
   */
  constructor(
    private readonly incoming: Incoming,
    private awaitingContinue: Outgoing | undefined,
  ) {
    let url = incoming.url ?? '/';
    // The origin form (`/path?query`) is what clients send; the absolute form must be accepted
    // too, its authority standing for the Host field (RFC 9112 §3.2.2).
    if (url.charCodeAt(0) !== 0x2f) {
      const absolute = ABSOLUTE_FORM.exec(url);
      if (absolute !== null) {
        this.authority = absolute[1];
        url = absolute[2] === undefined || absolute[2] === '' ? '/' : absolute[2].charCodeAt(0) === 0x3f ? `/${absolute[2]}` : absolute[2];
      }
    }
    const q = url.indexOf('?');
    this.method = incoming.method ?? 'GET';
    this.path = q === -1 ? url : url.slice(0, q);
    this.query = q === -1 ? '' : url.slice(q + 1);
    // HTTP/2 carries the authority in `:authority`, checked by Node; Host is HTTP/1's.
    if (incoming.httpVersionMajor === 1) this.framingFault = hostFault(incoming);
  }

  /** The authority of an absolute-form target, which replaces the Host field (RFC 9112 §3.2.2). */
  private readonly authority: string | undefined;
  readonly framingFault: string | undefined;

  readBody(limit: number): Promise<BodyBytes> {
    if (this.awaitingContinue !== undefined) this.sendContinue();
    return readNodeBody(this.incoming, limit);
  }

  /**
   * Through the stream's async iterator, not the `data` events `readBody` uses: an upload costs
   * about half the CPU a GB this way (docs/benchmarks.md, "Distinct callers, DNS transports, memory").
   */
  drainBody(limit: number, marks?: readonly number[]): Promise<BodyDrained> {
    if (this.awaitingContinue !== undefined) this.sendContinue();
    return drainStreamBody(this.incoming, limit, marks);
  }

  private sendContinue(): void {
    (this.awaitingContinue as ServerResponse).writeContinue();
    this.awaitingContinue = undefined;
  }

  header(name: string): string | undefined {
    const value = this.incoming.headers[name];
    return Array.isArray(value) ? value.join(', ') : value;
  }

  origin(): string {
    const encrypted = (this.incoming.socket as { encrypted?: boolean }).encrypted === true;
    const host = this.authority ?? this.incoming.headers[':authority'] ?? this.incoming.headers.host;
    return `${encrypted ? 'https' : 'http'}://${typeof host === 'string' && SAFE_HOST.test(host) ? host : 'localhost'}`;
  }

  connection(): ConnectionFacts {
    return nodeConnection(this.incoming);
  }
}

function write(incoming: Incoming, outgoing: Outgoing, reply: HttpReply): void {
  // HTTP/2 has no connection header (RFC 9113 §8.2.2): ending the stream is enough there.
  if (incoming.httpVersionMajor >= 2) {
    (outgoing as Http2ServerResponse).writeHead(reply.status, Object.fromEntries(headerPairs(reply.headers)));
  } else {
    if (reply.close === true) reply.headers.push('Connection', 'close');
    (outgoing as ServerResponse).writeHead(reply.status, reply.headers);
  }
  // HEAD keeps every header of the GET, Content-Length included, and sends no body.
  if (incoming.method === 'HEAD') {
    reply.stream?.done?.();
    outgoing.end();
  } else if (reply.stream !== undefined) writeStream(outgoing, reply.stream);
  else if (reply.body === null) outgoing.end();
  else outgoing.end(reply.body);
}

/**
 * Writes a streamed body as fast as the client takes it: the next chunk only after `drain`, so
 * a slow reader holds one chunk of ours, never the whole body. A client that goes away stops it.
 *
 * The next chunk also waits one turn of the event loop past `drain`. Node's HTTP/2 session stops
 * reading its socket while one of its writes is in progress, and with the kernel holding little
 * unsent data (`tcp_notsent_lowat`) a download keeps a write in progress almost all the time: a
 * client that opened a large receive window then saw its probe on the same connection (the
 * responsiveness draft's self probe) read only when that window ran out, 1.7-2.0 s at 20 Mbit/s
 * with 8 MiB. The turn's poll phase reads what has arrived, at no cost in throughput on loopback.
 */
export function writeStream(outgoing: Outgoing, body: StreamedBody): void {
  // Both response classes are Writables; the union of their overloads is not callable as such.
  const writable = outgoing as ServerResponse;
  // A client gone before the reply was written (it waited for the end of the turn) has had its 'close'.
  if (writable.closed || writable.destroyed) {
    body.done?.();
    return;
  }
  const chunks = body.chunks();
  let gone = false;
  // 'close' comes once the response is over, written whole or its client gone.
  writable.once('close', () => {
    gone = true;
    body.done?.();
  });
  // The first immediate runs in this turn's check phase, before the next poll; the second after it.
  const afterPoll = (): void => {
    setImmediate(() => setImmediate(pump));
  };
  const pump = (): void => {
    for (;;) {
      if (gone) return;
      const next = chunks.next();
      if (next.done === true) {
        writable.end();
        return;
      }
      if (body.oneChunkQueued === true) {
        // A write that failed is a response that is over: its 'close' ends the body.
        writable.write(next.value, (err) => {
          if (err === null || err === undefined) afterPoll();
        });
        return;
      }
      if (!writable.write(next.value)) {
        writable.once('drain', afterPoll);
        return;
      }
    }
  };
  pump();
}

/**
 * Replies written at the end of the event loop's turn, together, instead of each as soon as it is
 * ready. A client on the same host (a reverse proxy in front of netdiag, a load generator) is
 * woken once for the replies of a turn rather than once per reply, and on this kind of machine
 * a wake-up costs more than the reply (a bare `node:http` server answering from `setImmediate`
 * spends about a third less CPU a request than one answering at once). Replies that waited are
 * held too: each events POST's body, and each caller's PTR answer, settles in the I/O callback of
 * its own connection or datagram, so written when it settled every reply woke the client again.
 * Figures: docs/benchmarks.md, "What was measured" and "The batch's copies, and replies that waited".
 * The wait is the rest of the turn's I/O callbacks; a reply's order among its connection's own
 * replies is unchanged. HTTP/2 replies are written at once.
 */
function turnWriter(logger: Logger): (incoming: Incoming, outgoing: Outgoing, reply: HttpReply) => void {
  let queued: [Incoming, Outgoing, HttpReply][] = [];
  const flush = (): void => {
    const now = queued;
    queued = [];
    for (const [incoming, outgoing, reply] of now) {
      // One reply that cannot be written must not keep the others of its turn from theirs.
      try {
        write(incoming, outgoing, reply);
      } catch (err) {
        logger.error({ err }, 'a reply could not be written');
        outgoing.destroy();
      }
    }
  };
  return (incoming, outgoing, reply) => {
    if (incoming.httpVersionMajor >= 2) {
      // On HTTP/2 a reply held to the turn's end queues behind the data a download on the same
      // connection writes in that turn: the responsiveness draft's probe on a loaded connection
      // took 68 ms instead of 40 at 20 Mbit/s (test/timed/rpm-link.test.ts, 8 MiB window).
      write(incoming, outgoing, reply);
      return;
    }
    if (queued.length === 0) setImmediate(flush);
    queued.push([incoming, outgoing, reply]);
  };
}

/**
 * The Node request listener: builds the core's request straight from `IncomingMessage` and
 * writes the reply with one `writeHead` and one `end`, with no Web `Request`/`Response` objects
 * in between (they cost more than the whole core on the hottest routes; see README, Design).
 */
export function nodeListener(app: App, logger: Logger, publicUrl: string | undefined): (incoming: Incoming, outgoing: Outgoing, expectsContinue?: boolean) => void {
  const writeAtTurnEnd = turnWriter(logger);
  return (incoming, outgoing, expectsContinue) => {
    let reply: HttpReply | Promise<HttpReply>;
    const request = new NodeRequest(incoming, expectsContinue === true ? outgoing : undefined);
    try {
      reply = app.handle(request);
    } catch (err) {
      // The core turns every error into a reply; reaching here is a bug in the adapter itself.
      logger.error({ err }, 'request failed outside the core');
      write(incoming, outgoing, detachedProblem('internal_error', 'The service failed to handle this request.', publicUrl ?? request.origin(), randomUUID()));
      return;
    }
    if (reply instanceof Promise) {
      reply.then(
        (r) => {
          writeAtTurnEnd(incoming, outgoing, r);
        },
        (err: unknown) => {
          logger.error({ err }, 'request failed outside the core');
          outgoing.destroy();
        },
      );
    } else {
      writeAtTurnEnd(incoming, outgoing, reply);
    }
  };
}
