import { createSocket } from 'node:dgram';
import { isIPv6 } from 'node:net';
import { DnsFailure } from '../../dns/errors.js';
import type { DnsTransport } from '../../dns/transport.js';
import { messageId } from '../../dns/wire.js';
import { exchangeOnce } from './dns-exchange.js';

/**
 * DNS over UDP. Each query gets its own socket, so the kernel picks a fresh random source port
 * (RFC 5452 §4.5); the socket is connected, so only datagrams from the resolver reach it and an
 * ICMP port-unreachable surfaces as ECONNREFUSED. A reply with another ID is ignored and the
 * wait goes on: it may be spoofed or late (RFC 5452 §9.1).
 */
export function udpTransport(host: string, port: number, truncationFallback?: DnsTransport): DnsTransport {
  return {
    truncationFallback,
    exchange(query, signal) {
      const socket = createSocket(isIPv6(host) ? 'udp6' : 'udp4');
      const id = messageId(query);
      return exchangeOnce(
        signal,
        () => {
          socket.close();
        },
        (settle) => {
          socket.on('error', () => {
            settle.reject(new DnsFailure('unavailable', 'the resolver could not be reached'));
          });
          socket.on('message', (message: Buffer) => {
            if (messageId(message) === id) settle.resolve(message);
          });
          socket.connect(port, host, () => {
            socket.send(query);
          });
        },
      );
    },
  };
}
