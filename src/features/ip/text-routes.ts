// Answers for curl, as users of ifconfig.co type them (docs/api.md, "Text answers for curl"):
// `curl host/country` prints one line. Each counts against the `ip` limit like /v1/ip, is never
// cached, and a field the data does not have is a 404 whose problem is a line of text too,
// unless the client asks for JSON.
import { CACHE } from '../../core/http/headers.js';
import { preferredForm } from '../../core/http/accept.js';
import { Problem } from '../../core/http/problems.js';
import { jsonReply } from '../../core/http/respond.js';
import type { RouteDefinition } from '../../core/http/router.js';
import type { Handler, HttpReply, RequestContext } from '../../core/http/types.js';
import type { ParsedAddress } from '../../core/net/address.js';
import type { CallerIpData, CallerPlace, IpFacts } from './facts.js';

/** The headers of every answer here: which of text, JSON or the page a client gets depends on `Accept`. */
const VARY = { Vary: 'Accept' } as const;

const line = (ctx: RequestContext, value: string): HttpReply => jsonReply(ctx, 200, `${value}\n`, 'text/plain; charset=utf-8', CACHE.noStore, VARY);

const json = (ctx: RequestContext, data: CallerIpData): HttpReply => jsonReply(ctx, 200, JSON.stringify(data), 'application/json', CACHE.noStore, VARY);

type PlaceField = (place: CallerPlace) => string | null;

/** The text paths that read the caller's place, with what a 404 says is missing. */
const PLACE_FIELDS: readonly (readonly [path: string, missing: string, read: PlaceField])[] = [
  ['/country', 'country', (p) => p.location.country],
  ['/country-iso', 'country code', (p) => p.location.country_code],
  ['/city', 'city', (p) => p.location.city],
  ['/region', 'region', (p) => p.location.region],
  // As ifconfig.co writes it, and as people search for it: AS15169.
  ['/asn', 'network (AS number)', (p) => (p.network.asn === null ? null : `AS${String(p.network.asn)}`)],
  ['/asn-org', "network's organization", (p) => p.network.organization],
  ['/coordinates', 'location', (p) => (p.location.latitude === null || p.location.longitude === null ? null : `${String(p.location.latitude)},${String(p.location.longitude)}`)],
  ['/timezone', 'time zone', (p) => p.location.timezone],
];

function missing(what: string, address: ParsedAddress): never {
  throw new Problem('not_found', `No ${what} is known for ${address.text}.`);
}

function textRoute(path: string, handle: Handler): RouteDefinition {
  return { path, GET: { limit: 'ip', plainProblems: true, handle } };
}

export function textRoutes(facts: IpFacts): RouteDefinition[] {
  const placeRoute = ([path, what, read]: (typeof PLACE_FIELDS)[number]): RouteDefinition =>
    textRoute(path, (ctx) => {
      const { address } = facts.address(ctx);
      return line(ctx, read(facts.place(ctx, address)) ?? missing(what, address));
    });
  return [
    textRoute('/ip', (ctx) => line(ctx, facts.address(ctx).address.text)),
    ...PLACE_FIELDS.map(placeRoute),
    textRoute('/hostname', (ctx) => {
      const { address } = facts.address(ctx);
      return facts.hostname(address).then((name) => line(ctx, name ?? missing('reverse name (PTR)', address)));
    }),
    // The /v1/ip object without the envelope, for `curl host/json | jq`.
    { path: '/json', GET: { limit: 'ip', handle: (ctx) => facts.all(ctx).then((data) => json(ctx, data)) } },
  ];
}

/**
 * `GET /`: a browser, whose `Accept` prefers `text/html`, gets the page (`page`); a client that
 * prefers JSON gets the /v1/ip object as /json does; any other (curl sends `*∕*`) the address and
 * a newline, as ifconfig.co does. Preference is by `Accept` weights (src/core/http/accept.ts), so
 * `text/html;q=0, text/plain` gets text. All count against the `ip` limit and are never cached.
 */
export function rootRoute(facts: IpFacts, page: (ctx: RequestContext, address: ParsedAddress) => HttpReply): RouteDefinition {
  return textRoute('/', (ctx) => {
    const { address } = facts.address(ctx);
    const form = preferredForm(ctx, ['html', 'json']);
    if (form === 'html') return page(ctx, address);
    if (form === 'json') return facts.all(ctx).then((data) => json(ctx, data));
    return line(ctx, address.text);
  });
}
