import { Problem } from '../../core/http/problems.js';
import type { DnsFailure } from '../../core/ports/dns-transport.js';

/** The problem a client sees: the class of failure, never the upstream's raw error text. */
export function problemFor(failure: DnsFailure): Problem {
  switch (failure.kind) {
    case 'invalid':
      return new Problem('upstream_invalid_response', `The DNS upstream sent an invalid response: ${failure.message}.`);
    case 'too_large':
      return new Problem('upstream_response_too_large', `The DNS upstream's response is over the service's bounds: ${failure.message}.`);
    case 'timeout':
      return new Problem('upstream_timeout', 'The DNS upstream did not answer before the deadline.');
    case 'unavailable':
      return new Problem('upstream_unavailable', `The DNS upstream is unavailable (${failure.message}); try again later.`);
  }
}
