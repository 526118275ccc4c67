import { createSocket, type Socket } from 'node:dgram';
import { isIPv6 } from 'node:net';
import { failureReason } from '../../../../core/failure-reason.js';
import { type DnsTransport, DnsFailure } from '../../../../core/ports/dns-transport.js';
import { messageId } from '../../../../engines/dns/wire.js';
import { exchangeOnce, type Settle } from './exchange.js';

/** Long-lived sockets per upstream: enough to spread replies over several receive buffers. */
const SOCKETS = 4;

/**
 * How long an ID stays unusable on its socket after its query ended without a reply (deadline):
 * the reply may still come, and must meet no later query with the same ID. Replies later than
 * this are far outside any upstream's own timeouts.
 */
const RETIRE_MS = 30_000;

interface Channel {
  socket: Socket;
  /** Settles when the socket is connected, and is then cleared: from then on a query is sent at once. */
  connecting: Promise<void> | undefined;
  pending: Map<number, Settle>;
  retired: Set<number>;
  broken: boolean;
}

/**
 * A socket connected to the upstream, its replies handed to the query in flight with their ID;
 * `onError` is told of a fault of the socket (an ICMP unreachable, a failed send).
 */
function openChannel(family: 'udp4' | 'udp6', host: string, port: number, onError: (channel: Channel, err: Error) => void): Channel {
  const socket = createSocket(family);
  const channel: Channel = {
    socket,
    pending: new Map(),
    retired: new Set(),
    broken: false,
    connecting: new Promise((resolve) => {
      socket.connect(port, host, () => {
        channel.connecting = undefined;
        resolve();
      });
    }),
  };
  // Long-lived, but never a reason for the process to stay up.
  socket.unref();
  socket.on('message', (message: Buffer) => {
    // A reply for no query in flight here (late, duplicated or forged) is dropped (RFC 5452 §9.1).
    channel.pending.get(messageId(message))?.resolve(message);
  });
  socket.on('error', (err) => {
    onError(channel, err);
  });
  return channel;
}

/** Sends a query at once on a connected socket, or once it connects, unless the query has ended or the socket broke meanwhile. */
function sendOn(channel: Channel, id: number, query: Uint8Array): void {
  if (channel.connecting === undefined) {
    channel.socket.send(query);
    return;
  }
  void channel.connecting.then(() => {
    if (channel.pending.has(id) && !channel.broken) channel.socket.send(query);
  });
}

/** An ID whose query ended unanswered, kept from later queries on its socket for RETIRE_MS (its reply may still come). */
function retire(channel: Channel, id: number): void {
  channel.retired.add(id);
  setTimeout(() => channel.retired.delete(id), RETIRE_MS).unref();
}

/**
 * DNS over UDP through a few long-lived sockets to the one upstream, as forwarders do
 * (dnsdist's backend sockets): no socket is opened, bound, connected and closed per query,
 * which was a quarter of the CPU of /v1/ip for distinct callers.
 *
 * What it keeps of RFC 5452: every query still has a random ID (§4.3) and a reply is taken
 * only by the query in flight with its ID on the socket it came to, the question then checked
 * by the resolver (§9.1; a mismatch is 502 as docs/api.md says); a reply to no query in flight
 * is dropped. An ID whose query ended unanswered is not reused on that socket for RETIRE_MS, so
 * a late reply cannot meet a newer query. What it gives up is the fresh source port per query
 * (§4.5, about 16 bits more for an off-path forger to guess): the sockets' ports are fixed for
 * their lifetime. That is why this mode is for an upstream on a trusted path (loopback by
 * default, or NETDIAG_DNS_UDP_SOCKETS=shared for a resolver on a network the operator trusts),
 * and a socket-per-query transport serves every other UDP upstream.
 */
export function sharedUdpTransport(host: string, port: number, fallback: DnsTransport, truncationFallback?: DnsTransport): DnsTransport {
  const family = isIPv6(host) ? 'udp6' : 'udp4';
  const channels: (Channel | undefined)[] = new Array<Channel | undefined>(SOCKETS).fill(undefined);
  let next = 0;

  function open(slot: number): Channel {
    const channel = openChannel(family, host, port, (broken, err) => {
      // An ICMP unreachable or a failed send: the upstream is not there for anyone on this
      // socket. Its queries fail as unavailable and the slot gets a new socket (and port).
      discard(slot, broken);
      const failure = new DnsFailure('unavailable', 'the resolver could not be reached', failureReason(err));
      for (const settle of [...broken.pending.values()]) settle.reject(failure);
    });
    channels[slot] = channel;
    return channel;
  }

  /** Closes a socket that failed; its slot opens a new one on next use. */
  function discard(slot: number, channel: Channel): void {
    if (channel.broken) return;
    channel.broken = true;
    if (channels[slot] === channel) channels[slot] = undefined;
    channel.socket.close();
  }

  /** A socket on which this ID is free, or undefined when every one has it in use (rare: 16 bits each). */
  function channelFor(id: number): Channel | undefined {
    for (let i = 0; i < SOCKETS; i++) {
      const slot = (next + i) % SOCKETS;
      const channel = channels[slot] ?? open(slot);
      if (!channel.pending.has(id) && !channel.retired.has(id)) {
        next = (slot + 1) % SOCKETS;
        return channel;
      }
    }
    return undefined;
  }

  return {
    truncationFallback,
    exchange(query, deadline) {
      const id = messageId(query);
      const channel = channelFor(id);
      if (channel === undefined) return fallback.exchange(query, deadline);
      let answered = false;
      return exchangeOnce(
        deadline,
        () => {
          channel.pending.delete(id);
          if (!answered && !channel.broken) retire(channel, id);
        },
        (settle) => {
          channel.pending.set(id, {
            resolve: (message) => {
              answered = true;
              settle.resolve(message);
            },
            reject: (failure) => {
              settle.reject(failure);
            },
          });
          sendOn(channel, id, query);
        },
      );
    },
  };
}
