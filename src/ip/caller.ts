import type { RequestContext } from '../http/types.js';
import type { Services } from '../services.js';
import { resolveCaller, type CallerResult } from './caller-address.js';

/** The caller of this request, resolved once and remembered on the request context. */
export function callerOf(ctx: RequestContext, services: Pick<Services, 'trust' | 'trustHeader'>): CallerResult {
  if (ctx.caller !== undefined) return ctx.caller;
  const result = resolveCaller(ctx.req.connection().peerAddress, ctx.req, services.trust, services.trustHeader);
  ctx.caller = result;
  return result;
}
