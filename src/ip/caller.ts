import type { RequestContext } from '../http/types.js';
import type { Services } from '../services.js';
import { resolveCaller, type CallerResult } from './caller-address.js';

/** The caller of this request, resolved once and remembered on the request context. */
export function callerOf(ctx: RequestContext, services: Pick<Services, 'trust' | 'trustHeader'>): CallerResult {
  if (ctx.caller !== undefined) return ctx.caller;
  const connection = ctx.req.connection();
  const result = resolveCaller(connection.peerAddress, ctx.req, services.trust, services.trustHeader, connection.proxied);
  ctx.caller = result;
  return result;
}
