import { readAtMost } from '../../core/http/bounded-read.js';
import { failureReason } from '../../core/failure-reason.js';
import { MAX_MESSAGE_BYTES, type DnsTransport, DnsFailure } from '../../core/ports/dns-transport.js';

/**
 * DNS over HTTPS (RFC 8484) with POST and `application/dns-message`. Uses the runtime's `fetch`,
 * which keeps connections to the resolver alive and reuses them across lookups.
 */
export function dohTransport(url: string, fetchImpl: typeof fetch = fetch): DnsTransport {
  return {
    async exchange(query, deadline) {
      let response: Response;
      try {
        response = await fetchImpl(url, {
          method: 'POST',
          headers: { 'Content-Type': 'application/dns-message', Accept: 'application/dns-message' },
          body: query as Uint8Array<ArrayBuffer>,
          signal: deadline.signal,
          // The one fixed resolver is the URL the operator named; a redirect elsewhere is not
          // followed but answered as the invalid reply it is (502, naming the status).
          redirect: 'manual',
        });
      } catch (err) {
        if (deadline.expired) throw new DnsFailure('timeout', 'deadline', 'deadline');
        throw new DnsFailure('unavailable', 'the DoH server could not be reached', failureReason(err));
      }
      if (!response.ok) {
        await response.body?.cancel();
        // RFC 8484 §4.2.1: a non-2xx answer is a failure of the HTTP exchange, not a DNS answer.
        throw new DnsFailure(response.status >= 500 ? 'unavailable' : 'invalid', `HTTP status ${response.status}`, `status_${response.status}`);
      }
      if (response.headers.get('content-type')?.split(';')[0]?.trim() !== 'application/dns-message') {
        await response.body?.cancel();
        throw new DnsFailure('invalid', 'the DoH response is not application/dns-message');
      }
      try {
        return await readBounded(response);
      } catch (err) {
        if (err instanceof DnsFailure) throw err;
        if (deadline.expired) throw new DnsFailure('timeout', 'deadline', 'deadline');
        throw new DnsFailure('unavailable', 'the DoH response was cut off', failureReason(err));
      }
    },
  };
}

async function readBounded(response: Response): Promise<Uint8Array> {
  if (response.body === null) return new Uint8Array(0);
  const message = await readAtMost(response.body, MAX_MESSAGE_BYTES, true);
  if (message === undefined) {
    throw new DnsFailure('too_large', `a message over ${MAX_MESSAGE_BYTES} bytes`);
  }
  return message;
}
