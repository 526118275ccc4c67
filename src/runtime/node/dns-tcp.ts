import { connect } from 'node:net';
import { DnsFailure } from '../../dns/errors.js';
import type { DnsTransport } from '../../dns/transport.js';

/**
 * DNS over TCP (RFC 7766): one connection per query, each message behind a two-octet length
 * (RFC 1035 §4.2.2), so a reply can never exceed 65535 bytes.
 */
export function tcpTransport(host: string, port: number): DnsTransport {
  return {
    exchange(query, signal) {
      return new Promise((resolve, reject) => {
        const socket = connect({ host, port });
        let buffered = Buffer.alloc(0);
        let settled = false;
        const finish = (outcome: () => void) => {
          if (settled) return;
          settled = true;
          signal.removeEventListener('abort', onAbort);
          socket.destroy();
          outcome();
        };
        const fail = (failure: DnsFailure) => {
          finish(() => {
            reject(failure);
          });
        };
        const onAbort = () => {
          fail(new DnsFailure('timeout', 'deadline'));
        };
        if (signal.aborted) {
          onAbort();
          return;
        }
        signal.addEventListener('abort', onAbort);
        socket.on('connect', () => {
          const framed = Buffer.alloc(query.length + 2);
          framed.writeUInt16BE(query.length, 0);
          framed.set(query, 2);
          socket.write(framed);
        });
        socket.on('data', (chunk: Buffer) => {
          buffered = Buffer.concat([buffered, chunk]);
          if (buffered.length < 2) return;
          const length = buffered.readUInt16BE(0);
          if (buffered.length >= length + 2) {
            const message = buffered.subarray(2, length + 2);
            finish(() => {
              resolve(message);
            });
          }
        });
        socket.on('error', () => {
          fail(new DnsFailure('unavailable', 'the resolver could not be reached'));
        });
        socket.on('close', () => {
          fail(new DnsFailure('invalid', 'the connection closed before a whole message arrived'));
        });
      });
    },
  };
}
