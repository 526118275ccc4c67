import { PAGE_CATALOGUES, PAGE_CSS, PAGE_HTML_AFTER, PAGE_HTML_HEAD, PAGE_HTML_MIDDLE, PAGE_JS } from '../generated/page-assets.js';
import { CACHE } from '../core/http/headers.js';
import { jsonReply } from '../core/http/respond.js';
import { assetHandler, chosenCoding, encodedReply, type TextCompressor } from '../core/http/static-asset.js';
import type { RouteDefinition } from '../core/http/router.js';
import type { HttpReply, RequestContext } from '../core/http/types.js';
import type { ParsedAddress } from '../core/net/address.js';
import { pagePolicy } from '../core/http/pages.js';
import { isIpv6LiteralOrigin } from '../common/origin.js';
import type { ListedServer } from '../common/servers.js';

/** What the page is told of the deployment in its own HTML, so it asks for nothing it lacks. */
interface PageSettings {
  /** Whether a TURN server is configured: the page asks for credentials only then. */
  turn: boolean;
  /** The deployment's single-family origins (`NETDIAG_IPV4_URL`, `NETDIAG_IPV6_URL`), or null. */
  families: { ipv4: string | null; ipv6: string | null };
  /** The operator's deployments (`NETDIAG_SERVERS`): the page may time each and measure against one. */
  servers: readonly ListedServer[];
  /** The credits the geo data's licence asks for, shown in the page's footer. */
  credits: readonly string[];
  /** Where this server serves the client package (src/features/client-package.ts), or null: the page then gives the command that installs it. */
  clientPackage: string | null;
}

/** An attribute value: origins are URL-parsed, but escaping costs nothing and rules out a mistake. */
const attribute = (value: string): string => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

/** The origins a policy can name, each once: an IPv6-literal origin cannot be named (src/common/origin.ts). */
const connectable = (origins: readonly (string | null)[]): string[] => [...new Set(origins.filter((origin): origin is string => origin !== null && !isIpv6LiteralOrigin(origin)))];

/**
 * The page (docs/api.md, "The page"), for `GET /` when a browser asks (src/features/ip/text-routes.ts
 * chooses): the caller's address is written into it, the deployment's settings are attributes
 * of its root element, and its Content-Security-Policy lets it connect to this origin, the
 * family origins and the listed deployments' origins, nothing else. Never cached: it carries the caller's address.
 */
export function pageHandler(settings: PageSettings, compress: TextCompressor | undefined): (ctx: RequestContext, address: ParsedAddress) => HttpReply {
  const { ipv4, ipv6 } = settings.families;
  const attributes = [
    `data-turn="${settings.turn ? 'on' : 'off'}"`,
    ...(settings.clientPackage === null ? [] : [`data-client-package="${attribute(settings.clientPackage)}"`]),
    ...(ipv4 === null ? [] : [`data-ipv4-url="${attribute(ipv4)}"`]),
    ...(ipv6 === null ? [] : [`data-ipv6-url="${attribute(ipv6)}"`]),
    ...(settings.credits.length === 0 ? [] : [`data-credits="${attribute(settings.credits.join('\n'))}"`]),
  ].join(' ');
  // Into the HTML's declared slot (web/index.html, {{SETTINGS}}; scripts/generate.mjs).
  const before = PAGE_HTML_HEAD + attributes + PAGE_HTML_MIDDLE;
  const headers = {
    Vary: 'Accept',
    // An IPv6-literal origin cannot be named in a policy (src/common/origin.ts); naming it anyway
    // only makes the browser report the policy as invalid. The page asks such an origin only when
    // it is its own, and otherwise says why not (web/connection/dual-stack.ts).
    'Content-Security-Policy': pagePolicy(connectable([ipv4, ipv6, ...settings.servers.map((s) => s.url)])),
    'X-Content-Type-Options': 'nosniff',
    'Referrer-Policy': 'no-referrer',
  };
  // Every answer that could have been coded says so, coded or not (RFC 9110 §12.5.5).
  const compressible = { ...headers, Vary: 'Accept, Accept-Encoding' };
  // The canonical address text holds only hex digits, dots and colons: nothing to escape.
  return (ctx, address) => {
    const html = before + address.text + PAGE_HTML_AFTER;
    // Compressed per request where the runtime can (the address makes each page its own): about
    // 15 kB of HTML to 4 kB. Workers leave it to the platform, which compresses HTML itself.
    const coding = compress === undefined ? 'identity' : chosenCoding(ctx);
    const reply = jsonReply(ctx, 200, html, 'text/html; charset=utf-8', CACHE.noStore, compress === undefined ? headers : compressible);
    return compress === undefined || coding === 'identity' ? reply : encodedReply(reply, coding, compress(html, coding));
  };
}

/**
 * The page's script, style and language catalogues: the same for everyone, so cacheable like
 * the regions list, compressed at build and revalidated by ETag (src/core/http/static-asset.ts).
 */
export function pageAssetRoutes(): RouteDefinition[] {
  const nosniff = { 'X-Content-Type-Options': 'nosniff' };
  return [
    { path: '/app.js', GET: { limit: null, handle: assetHandler(PAGE_JS, 'text/javascript; charset=utf-8', CACHE.regions, nosniff) } },
    { path: '/app.css', GET: { limit: null, handle: assetHandler(PAGE_CSS, 'text/css; charset=utf-8', CACHE.regions, nosniff) } },
    // Each language but English, fetched by the page for a reader who reads it (web/i18n/page-text.ts).
    ...Object.entries(PAGE_CATALOGUES).map(([code, catalogue]) => ({ path: `/i18n/${code}.json`, GET: { limit: null, handle: assetHandler(catalogue, 'application/json', CACHE.regions, nosniff) } })),
  ];
}
