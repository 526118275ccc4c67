import type { RequestContext } from './types.js';
import { resolveCaller, type CallerResult, type TrustedHeader } from '../net/caller-address.js';
import type { TrustPolicy } from '../net/trust.js';

/** The operator's rule for naming a caller: which peers are proxies, and which header they write. */
export interface CallerRule {
  trust: TrustPolicy;
  trustHeader: TrustedHeader;
}

/** The caller of this request, resolved once and remembered on the request context. */
export function callerOf(ctx: RequestContext, rule: CallerRule): CallerResult {
  if (ctx.caller !== undefined) return ctx.caller;
  const connection = ctx.req.connection();
  const result = resolveCaller(connection.peerAddress, ctx.req, rule.trust, rule.trustHeader, connection.proxied);
  ctx.caller = result;
  return result;
}
