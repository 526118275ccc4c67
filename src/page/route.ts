import { PAGE_CSS, PAGE_HTML_AFTER, PAGE_HTML_BEFORE, PAGE_JS } from '../generated/page-assets.js';
import { CACHE } from '../http/headers.js';
import { Problem } from '../http/problems.js';
import { jsonReply } from '../http/respond.js';
import type { RouteDefinition } from '../http/router.js';
import type { HttpReply, RequestContext } from '../http/types.js';
import { callerOf, type CallerRule } from '../http/caller.js';
import { PAGE_POLICY, wantsHtml } from '../http/pages.js';

/**
 * `GET /` (docs/api.md, "Envelope, routes and limits"): a browser, whose `Accept` names `text/html`,
 * gets the page; any other client (curl sends `*∕*`) gets the caller's address and a newline as
 * text/plain, as ifconfig.co does. Both name the caller by the /v1/ip rule, count against the
 * `ip` limit, and are never cached (the API contract: request-specific results); `Vary: Accept`
 * tells any cache between that the two answers differ.
 */

function root(rule: CallerRule, turn: boolean) {
  // Whether the deployment has a TURN server, in the page itself: the page asks for credentials
  // only then, rather than meeting a 404 (which a browser reports as a console error).
  const before = turn ? PAGE_HTML_BEFORE.replace('<html lang="en" data-turn="off">', '<html lang="en" data-turn="on">') : PAGE_HTML_BEFORE;
  return (ctx: RequestContext): HttpReply => {
    const caller = callerOf(ctx, rule);
    if (!caller.ok) throw new Problem('connection_unavailable', `The caller's address cannot be established: ${caller.reason}.`);
    if (!wantsHtml(ctx)) {
      return jsonReply(ctx, 200, `${caller.address.text}\n`, 'text/plain; charset=utf-8', CACHE.noStore, { Vary: 'Accept' });
    }
    // The canonical address text holds only hex digits, dots and colons: nothing to escape.
    const html = before + caller.address.text + PAGE_HTML_AFTER;
    return jsonReply(ctx, 200, html, 'text/html; charset=utf-8', CACHE.noStore, {
      Vary: 'Accept',
      'Content-Security-Policy': PAGE_POLICY,
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
    });
  };
}

/** The page's script and style: the same for everyone, so cacheable like the regions list. */
function asset(body: string, contentType: string) {
  return (ctx: RequestContext): HttpReply => jsonReply(ctx, 200, body, contentType, CACHE.regions, { 'X-Content-Type-Options': 'nosniff' });
}

export function pageRoutes(rule: CallerRule, turn: boolean): RouteDefinition[] {
  return [
    { path: '/', GET: { limit: 'ip', handle: root(rule, turn) } },
    { path: '/app.js', GET: { limit: null, handle: asset(PAGE_JS, 'text/javascript; charset=utf-8') } },
    { path: '/app.css', GET: { limit: null, handle: asset(PAGE_CSS, 'text/css; charset=utf-8') } },
  ];
}
