import { Problem } from '../../core/http/problems.js';

/**
 * Why a lookup failed. Each kind maps to one status (docs/api.md, "DNS"): an invalid or oversized
 * upstream message 502, a missed deadline 504, an upstream that cannot be reached 503.
 */
type DnsFailureKind = 'invalid' | 'too_large' | 'timeout' | 'unavailable';

export class DnsFailure extends Error {
  /**
   * The class of the fault for the operator's log (`ECONNREFUSED`, `status_503`, `deadline`,
   * a TLS error code), never shown to a client.
   */
  readonly reason: string;

  constructor(
    readonly kind: DnsFailureKind,
    message: string,
    reason?: string,
  ) {
    super(message);
    this.name = 'DnsFailure';
    this.reason = reason ?? kind;
  }
}

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
