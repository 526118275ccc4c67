// What every HTML answer of the service shares (the page, the problem documents): the
// content-security policy and the rule that tells a browser from curl.
import type { RequestContext } from './types.js';

/**
 * Everything the page loads comes from this origin (no CDN, no other origin); the policy makes
 * a browser refuse anything else, so a mistake shows up as a blocked request.
 */
export const PAGE_POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

export const wantsHtml = (ctx: RequestContext): boolean => (ctx.req.header('accept') ?? '').toLowerCase().includes('text/html');
