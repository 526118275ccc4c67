import { type Deadline, DnsFailure } from '../../../../core/ports/dns-transport.js';

export interface Settle {
  resolve(message: Uint8Array): void;
  reject(failure: DnsFailure): void;
}

/**
 * One query/reply exchange on a socket of its own: the first outcome wins (reply, socket error
 * or the deadline's abort), the socket is released exactly once, and a late event is ignored.
 */
export function exchangeOnce(deadline: Deadline, release: () => void, start: (settle: Settle) => void): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    let settled = false;
    let forget: () => void = () => undefined;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      forget();
      release();
      outcome();
    };
    const onExpire = () => {
      settle(() => {
        reject(new DnsFailure('timeout', 'deadline', 'deadline'));
      });
    };
    if (deadline.expired) {
      onExpire();
      return;
    }
    forget = deadline.onExpire(onExpire);
    start({
      resolve: (message) => {
        settle(() => {
          resolve(message);
        });
      },
      reject: (failure) => {
        settle(() => {
          reject(failure);
        });
      },
    });
  });
}
