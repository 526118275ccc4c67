import type { RequestContext } from './types.js';
import { resolveCaller, type CallerResult, type TrustedHeader } from '../net/caller-address.js';
import type { TrustPolicy } from '../net/trust.js';

/** The caller of this request, resolved once and remembered on the request context. */
export function callerOf(ctx: RequestContext, services: { trust: TrustPolicy; trustHeader: TrustedHeader }): CallerResult {
  if (ctx.caller !== undefined) return ctx.caller;
  const connection = ctx.req.connection();
  const result = resolveCaller(connection.peerAddress, ctx.req, services.trust, services.trustHeader, connection.proxied);
  ctx.caller = result;
  return result;
}
