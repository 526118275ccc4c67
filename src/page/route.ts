import { PAGE_CSS, PAGE_HTML_AFTER, PAGE_HTML_HEAD, PAGE_HTML_MIDDLE, PAGE_JS } from '../generated/page-assets.js';
import { CACHE } from '../http/headers.js';
import { jsonReply } from '../http/respond.js';
import type { RouteDefinition } from '../http/router.js';
import type { HttpReply, RequestContext } from '../http/types.js';
import type { ParsedAddress } from '../net/address.js';
import { pagePolicy } from '../http/pages.js';
import { isIpv6LiteralOrigin } from '../net/origin.js';

/** What the page is told of the deployment in its own HTML, so it asks for nothing it lacks. */
interface PageSettings {
  /** Whether a TURN server is configured: the page asks for credentials only then. */
  turn: boolean;
  /** The deployment's single-family origins (`NETDIAG_IPV4_URL`, `NETDIAG_IPV6_URL`), or null. */
  families: { ipv4: string | null; ipv6: string | null };
  /** The credits the geo data's licence asks for, shown in the page's footer. */
  credits: readonly string[];
}

/** An attribute value: origins are URL-parsed, but escaping costs nothing and rules out a mistake. */
const attribute = (value: string): string => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

/**
 * The page (docs/api.md, "The page"), for `GET /` when a browser asks (src/ip/text-routes.ts
 * chooses): the caller's address is written into it, the deployment's settings are attributes
 * of its root element, and its Content-Security-Policy lets it connect to this origin and to the
 * family origins, nothing else. Never cached: it carries the caller's address.
 */
export function pageHandler(settings: PageSettings): (ctx: RequestContext, address: ParsedAddress) => HttpReply {
  const { ipv4, ipv6 } = settings.families;
  const attributes = [
    `data-turn="${settings.turn ? 'on' : 'off'}"`,
    ...(ipv4 === null ? [] : [`data-ipv4-url="${attribute(ipv4)}"`]),
    ...(ipv6 === null ? [] : [`data-ipv6-url="${attribute(ipv6)}"`]),
    ...(settings.credits.length === 0 ? [] : [`data-credits="${attribute(settings.credits.join('\n'))}"`]),
  ].join(' ');
  // Into the HTML's declared slot (web/index.html, {{SETTINGS}}; scripts/generate.mjs).
  const before = PAGE_HTML_HEAD + attributes + PAGE_HTML_MIDDLE;
  const headers = {
    Vary: 'Accept',
    // An IPv6-literal origin cannot be named in a policy (src/net/origin.ts); naming it anyway
    // only makes the browser report the policy as invalid. The page asks such an origin only when
    // it is its own, and otherwise says why not (web/dual-stack.ts).
    'Content-Security-Policy': pagePolicy([ipv4, ipv6].filter((origin): origin is string => origin !== null && !isIpv6LiteralOrigin(origin))),
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
  };
  // The canonical address text holds only hex digits, dots and colons: nothing to escape.
  return (ctx, address) => jsonReply(ctx, 200, before + address.text + PAGE_HTML_AFTER, 'text/html; charset=utf-8', CACHE.noStore, headers);
}

/** The page's script and style: the same for everyone, so cacheable like the regions list. */
function asset(body: string, contentType: string) {
  return (ctx: RequestContext): HttpReply => jsonReply(ctx, 200, body, contentType, CACHE.regions, { 'X-Content-Type-Options': 'nosniff' });
}

export function pageAssetRoutes(): RouteDefinition[] {
  return [
    { path: '/app.js', GET: { limit: null, handle: asset(PAGE_JS, 'text/javascript; charset=utf-8') } },
    { path: '/app.css', GET: { limit: null, handle: asset(PAGE_CSS, 'text/css; charset=utf-8') } },
  ];
}
