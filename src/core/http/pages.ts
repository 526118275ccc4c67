// What every HTML answer of the service shares (the page, the problem documents): the
// content-security policy and the rule that tells a browser from curl.
import { preferredForm } from './accept.js';
import type { RequestContext } from './types.js';

/**
 * Everything the page loads comes from this origin (no CDN, no other origin); the policy makes
 * a browser refuse anything else, so a mistake shows up as a blocked request.
 */
export const PAGE_POLICY = pagePolicy([]);

/**
 * The policy with `connect-src` naming `origins` beside this one: the deployment's single-family
 * origins (`NETDIAG_IPV4_URL`, `NETDIAG_IPV6_URL`), which the page asks for the caller's address
 * over each family, and the operator's listed deployments (`NETDIAG_SERVERS`), which it may time
 * and measure against; nothing else.
 */
export function pagePolicy(origins: readonly string[]): string {
  const connect = ["'self'", ...origins].join(' ');
  return `default-src 'none'; script-src 'self'; style-src 'self'; connect-src ${connect}; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'`;
}

/** Whether the client prefers the HTML form to text (a browser's navigation), by `Accept` and its weights. */
export const wantsHtml = (ctx: Pick<RequestContext, 'req'>): boolean => preferredForm(ctx, ['html']) === 'html';

/**
 * Whether the client prefers JSON (`application/json`, `application/problem+json`) to text: a
 * script that asks for JSON gets it where curl, which sends `*∕*`, gets text.
 */
export const wantsJson = (ctx: Pick<RequestContext, 'req'>): boolean => preferredForm(ctx, ['json']) === 'json';
