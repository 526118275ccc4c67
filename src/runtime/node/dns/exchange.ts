import { DnsFailure } from '../../../dns/errors.js';

export interface Settle {
  resolve(message: Uint8Array): void;
  reject(failure: DnsFailure): void;
}

/**
 * One query/reply exchange on a socket of its own: the first outcome wins (reply, socket error
 * or the deadline's abort), the socket is released exactly once, and a late event is ignored.
 */
export function exchangeOnce(signal: AbortSignal, release: () => void, start: (settle: Settle) => void): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const settle = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      release();
      outcome();
    };
    const onAbort = () => {
      settle(() => {
        reject(new DnsFailure('timeout', 'deadline', 'deadline'));
      });
    };
    if (signal.aborted) {
      onAbort();
      return;
    }
    signal.addEventListener('abort', onAbort);
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
