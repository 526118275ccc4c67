// What every HTML answer of the service shares (the page, the problem documents): the
// content-security policy and the rule that tells a browser from curl.
import type { RequestContext } from './types.js';

/**
 * Everything the page loads comes from this origin (no CDN, no other origin); the policy makes
 * a browser refuse anything else, so a mistake shows up as a blocked request.
 */
export const PAGE_POLICY = pagePolicy([]);

/**
 * The policy with `connect-src` naming `origins` beside this one: the deployment's single-family
 * origins (`NETDIAG_IPV4_URL`, `NETDIAG_IPV6_URL`), which the page asks for the caller's address
 * over each family, and nothing else.
 */
export function pagePolicy(origins: readonly string[]): string {
  const connect = ["'self'", ...origins].join(' ');
  return `default-src 'none'; script-src 'self'; style-src 'self'; connect-src ${connect}; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'`;
}

export const wantsHtml = (ctx: RequestContext): boolean => (ctx.req.header('accept') ?? '').toLowerCase().includes('text/html');

/**
 * Whether the client names a JSON type in `Accept` (`application/json`, `application/problem+json`):
 * a script that asks for JSON gets it where curl, which sends `*∕*`, gets text.
 */
export const wantsJson = (ctx: Pick<RequestContext, 'req'>): boolean => /\bapplication\/(?:[a-z.+-]*\+)?json\b/i.test(ctx.req.header('accept') ?? '');
