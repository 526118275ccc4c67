import { createSocket } from 'node:dgram';
import { isIPv6 } from 'node:net';
import { failureReason } from '../../../../core/failure-reason.js';
import { type DnsTransport, DnsFailure } from '../../../../core/ports/dns-transport.js';
import { messageId } from '../../../../engines/dns/wire.js';
import { exchangeOnce } from './exchange.js';

/**
 * DNS over UDP. Every query has a socket of its own, bound by the kernel to a fresh random
 * source port (RFC 5452 §4.5: with the random ID, about 32 bits an off-path forger must guess
 * for each query, which matters because answers feed a shared cache). The socket is connected
 * to the resolver, so only its datagrams arrive and an ICMP port-unreachable surfaces as an
 * error. A reply with another ID is ignored and the wait goes on (RFC 5452 §9.1), as it may be
 * spoofed. The socket is closed when the query ends, whatever ended it, so a late reply can
 * never meet another query.
 */
export function udpTransport(host: string, port: number, truncationFallback?: DnsTransport): DnsTransport {
  const family = isIPv6(host) ? 'udp6' : 'udp4';
  return {
    truncationFallback,
    exchange(query, deadline) {
      const socket = createSocket(family);
      const id = messageId(query);
      let closed = false;
      return exchangeOnce(
        deadline,
        () => {
          closed = true;
          socket.close();
        },
        (settle) => {
          socket.on('error', (err) => {
            settle.reject(new DnsFailure('unavailable', 'the resolver could not be reached', failureReason(err)));
          });
          socket.on('message', (message: Buffer) => {
            if (messageId(message) === id) settle.resolve(message);
          });
          socket.connect(port, host, () => {
            // The deadline may have ended the query while the socket was connecting.
            if (!closed) socket.send(query);
          });
        },
      );
    },
  };
}
