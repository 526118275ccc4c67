import { createSocket, type Socket } from 'node:dgram';
import { isIPv6 } from 'node:net';
import { DnsFailure } from '../../dns/errors.js';
import type { DnsTransport } from '../../dns/transport.js';
import { messageId } from '../../dns/wire.js';
import { exchangeOnce } from './dns-exchange.js';

/** Queries one socket carries before it is closed, so source ports keep changing. */
const QUERIES_PER_SOCKET = 64;
/** Idle sockets kept open for the next queries. */
const IDLE_SOCKETS = 16;

interface PooledSocket {
  socket: Socket;
  used: number;
  /** Called with each datagram while a query is in flight on this socket. */
  onMessage: ((message: Buffer) => void) | undefined;
  onError: (() => void) | undefined;
  connected: boolean;
}

/**
 * DNS over UDP. A socket carries one query at a time and is connected to the resolver, so only
 * its datagrams arrive and an ICMP port-unreachable surfaces as an error. Sockets are reused
 * for at most 64 queries, then closed: the source port still changes often (RFC 5452 §4.5)
 * while a lookup no longer pays for opening and closing a socket (measured: over 100 µs of CPU
 * per query). A socket whose query timed out or failed is closed at once, so a late reply can
 * never meet the next query; and a reply with another ID is ignored and the wait goes on
 * (RFC 5452 §9.1), as it may be spoofed.
 */
export function udpTransport(host: string, port: number, truncationFallback?: DnsTransport): DnsTransport {
  const idle: PooledSocket[] = [];

  const open = (): PooledSocket => {
    const socket = createSocket(isIPv6(host) ? 'udp6' : 'udp4');
    const pooled: PooledSocket = { socket, used: 0, onMessage: undefined, onError: undefined, connected: false };
    socket.on('message', (message: Buffer) => pooled.onMessage?.(message));
    socket.on('error', () => pooled.onError?.());
    // An idle pooled socket must not keep the process alive; a lookup in flight holds its timer.
    socket.unref();
    socket.connect(port, host, () => {
      pooled.connected = true;
    });
    return pooled;
  };

  const release = (pooled: PooledSocket, healthy: boolean) => {
    pooled.onMessage = undefined;
    pooled.onError = undefined;
    if (healthy && pooled.used < QUERIES_PER_SOCKET && idle.length < IDLE_SOCKETS) idle.push(pooled);
    else pooled.socket.close();
  };

  return {
    truncationFallback,
    exchange(query, signal) {
      const pooled = idle.pop() ?? open();
      pooled.used++;
      const id = messageId(query);
      let answered = false;
      return exchangeOnce(
        signal,
        () => {
          release(pooled, answered);
        },
        (settle) => {
          pooled.onError = () => {
            settle.reject(new DnsFailure('unavailable', 'the resolver could not be reached'));
          };
          pooled.onMessage = (message) => {
            if (messageId(message) !== id) return;
            answered = true;
            settle.resolve(message);
          };
          if (pooled.connected) pooled.socket.send(query);
          else
            pooled.socket.once('connect', () => {
              // The deadline may have closed the socket while it was connecting.
              if (pooled.onMessage !== undefined) pooled.socket.send(query);
            });
        },
      );
    },
  };
}
