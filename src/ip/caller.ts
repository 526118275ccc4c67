import type { Context } from 'hono';
import type { AppEnv } from '../http/context.js';
import type { Services } from '../services.js';
import { resolveCaller, type CallerResult } from './caller-address.js';

/** The caller of this request, resolved once and remembered on the request state. */
export function callerOf(c: Context<AppEnv>, services: Pick<Services, 'getConnection' | 'trust'>): CallerResult {
  const state = c.var.state;
  if (state.caller !== undefined) return state.caller;
  const peer = services.getConnection(c).peerAddress;
  const result = resolveCaller(
    peer,
    { forwarded: c.req.header('forwarded'), xForwardedFor: c.req.header('x-forwarded-for') },
    services.trust,
  );
  state.caller = result;
  return result;
}
