import { connect } from 'node:net';
import { failureReason } from '../../../../core/failure-reason.js';
import { type DnsTransport, DnsFailure } from '../../../../core/ports/dns-transport.js';
import { exchangeOnce } from './exchange.js';

/** A message behind its two-octet length, as DNS over TCP carries it (RFC 1035 §4.2.2). */
export function framed(message: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(message.length + 2);
  out.writeUInt16BE(message.length, 0);
  out.set(message, 2);
  return out;
}

/**
 * DNS over TCP (RFC 7766): one connection per query, each message behind a two-octet length
 * (RFC 1035 §4.2.2), so a reply can never exceed 65535 bytes.
 */
export function tcpTransport(host: string, port: number): DnsTransport {
  return {
    exchange(query, deadline) {
      const socket = connect({ host, port });
      return exchangeOnce(
        deadline,
        () => {
          socket.destroy();
        },
        (settle) => {
          let buffered = Buffer.alloc(0);
          socket.on('connect', () => {
            socket.write(framed(query));
          });
          socket.on('data', (chunk: Buffer) => {
            buffered = Buffer.concat([buffered, chunk]);
            if (buffered.length >= 2 && buffered.length >= buffered.readUInt16BE(0) + 2) {
              settle.resolve(buffered.subarray(2, buffered.readUInt16BE(0) + 2));
            }
          });
          socket.on('error', (err) => {
            settle.reject(new DnsFailure('unavailable', 'the resolver could not be reached', failureReason(err)));
          });
          // A resolver that drops the connection before its reply is unavailable, not a sender
          // of bad messages: 503, like a refused connection.
          socket.on('close', () => {
            settle.reject(new DnsFailure('unavailable', 'the resolver closed the connection before a whole reply', 'closed_early'));
          });
        },
      );
    },
  };
}
