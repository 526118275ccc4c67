import { connect, type Socket } from 'node:net';
import { failureReason } from '../../../../core/failure-reason.js';
import { type DnsTransport, DnsFailure } from '../../../../core/ports/dns-transport.js';
import { messageId } from '../../../../engines/dns/wire.js';
import { exchangeOnce, type Settle } from './exchange.js';
import { framed } from './tcp.js';

interface Entry {
  settle: Settle;
  query: Uint8Array;
  retried: boolean;
  /** The connection it was last sent on. */
  home?: Connection;
}

interface Connection {
  socket: Socket;
  pending: Map<number, Entry>;
  /** Frames written in this iteration of the event loop, sent together (one writev). */
  corked: boolean;
}

/**
 * A connection's bytes as replies: each whole frame (RFC 1035 §4.2.2: a two-octet length, then
 * the message) settles the query of its ID; a partial frame waits for the rest.
 */
function replyReader(pending: ReadonlyMap<number, Entry>): (chunk: Buffer) => void {
  let buffered: Buffer = Buffer.alloc(0);
  return (chunk) => {
    buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
    let at = 0;
    while (buffered.length - at >= 2) {
      const length = buffered.readUInt16BE(at);
      if (buffered.length - at < 2 + length) break;
      const message = buffered.subarray(at + 2, at + 2 + length);
      at += 2 + length;
      // A reply for no query in flight (one that ended at its deadline) is dropped.
      pending.get(messageId(message))?.settle.resolve(message);
    }
    buffered = at === buffered.length ? Buffer.alloc(0) : buffered.subarray(at);
  };
}

/**
 * Writes a frame on the connection, corked until the check phase, after every I/O callback of
 * this loop iteration: the queries of all the requests read together leave in one write. (A
 * microtask or nextTick would flush after each request's own callback, one write per query.)
 */
function writeCorked(connection: Connection, frame: Uint8Array): void {
  if (!connection.corked) {
    connection.corked = true;
    connection.socket.cork();
    setImmediate(() => {
      connection.corked = false;
      connection.socket.uncork();
    });
  }
  connection.socket.write(frame);
}

/**
 * DNS over one long-lived TCP connection with many queries in flight (RFC 7766 §6.2.1.1
 * pipelining; replies may come in any order and are matched by ID, the question then checked by
 * the resolver). Queries made in the same iteration of the event loop leave in one write, and one
 * read brings back as many replies as have arrived, so under load a query costs a fraction of a
 * system call each way where a socket per query costs several. TCP needs no source-port
 * entropy (RFC 5452 §4.5 is about UDP): a forger must also guess the connection's sequence
 * numbers, so this serves any upstream.
 *
 * A resolver closes idle connections (Knot after 10 s, Unbound after 30 s); a query caught by
 * such a close before any reply is sent once more on a new connection (RFC 7766 §6.2.1: a
 * client should be ready to retry), a second close fails it as unavailable.
 *
 * A connection not up within `connectTimeoutMs` is given up (its queries fail as unavailable,
 * `connect_timeout`) and the next query opens a new one. Without that bound a resolver that
 * drops our SYNs (a host gone, a firewall) keeps the one connection every query waits on in
 * its connecting state for as long as the kernel retries (tcp_syn_retries: about two
 * minutes), so DNS would stay down that long after the resolver came back.
 */
export function pipelinedTcpTransport(host: string, port: number, fallback: DnsTransport, connectTimeoutMs: number): DnsTransport {
  let current: Connection | undefined;

  function open(): Connection {
    const socket = connect({ host, port, noDelay: true });
    socket.unref();
    const connection: Connection = { socket, pending: new Map(), corked: false };
    socket.on('data', replyReader(connection.pending));
    let failure: DnsFailure | undefined;
    const connectDeadline = setTimeout(() => {
      failure = new DnsFailure('unavailable', 'the resolver did not accept a connection in time', 'connect_timeout');
      socket.destroy();
    }, connectTimeoutMs);
    connectDeadline.unref();
    socket.once('connect', () => {
      clearTimeout(connectDeadline);
    });
    /** The resolver closed its side (or reset it) after the connection was up: an idle close, maybe crossing our queries. */
    let closedByPeer = false;
    socket.on('end', () => {
      closedByPeer = true;
      // No new query goes on a connection the resolver is closing.
      if (current === connection) current = undefined;
    });
    socket.on('error', (err) => {
      const code = (err as NodeJS.ErrnoException).code;
      // A reset or a write after the resolver's FIN is how an idle close crossing a query may
      // show itself; a refused connect (or any other error) is the resolver not being there.
      if (code === 'ECONNRESET' || code === 'EPIPE') closedByPeer = true;
      failure = new DnsFailure('unavailable', 'the resolver could not be reached', failureReason(err));
    });
    socket.on('close', () => {
      clearTimeout(connectDeadline);
      if (current === connection) current = undefined;
      for (const [id, entry] of [...connection.pending]) {
        connection.pending.delete(id);
        // Sent once more only if it has not been already and its ID is free on the new connection.
        if (!entry.retried && (failure === undefined || closedByPeer) && current?.pending.has(id) !== true) {
          entry.retried = true;
          send(entry);
        } else {
          entry.settle.reject(failure ?? new DnsFailure('unavailable', 'the resolver closed the connection before a whole reply', 'closed_early'));
        }
      }
    });
    return connection;
  }

  function send(entry: Entry): void {
    const { query } = entry;
    const connection = current ?? (current = open());
    entry.home = connection;
    connection.pending.set(messageId(query), entry);
    writeCorked(connection, framed(query));
  }

  return {
    exchange(query, deadline) {
      const id = messageId(query);
      // Its ID is in flight on the connection already (rare: 16 bits): a connection of its own.
      if (current?.pending.has(id) === true) return fallback.exchange(query, deadline);
      let entry: Entry | undefined;
      return exchangeOnce(
        deadline,
        () => {
          const home = entry?.home;
          if (home !== undefined && home.pending.get(id) === entry) home.pending.delete(id);
        },
        (settle) => {
          entry = { settle, query, retried: false };
          send(entry);
        },
      );
    },
  };
}
