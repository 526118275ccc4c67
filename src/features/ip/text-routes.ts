// Answers for curl, as users of ifconfig.co type them (docs/api.md, "Text answers for curl" and
// "A drop-in for ifconfig.co scripts"): `curl host/country` prints one line, `curl host/json`
// echoip's object. Each counts against the `ip` limit like /v1/ip and is never cached. `?ip=`
// asks the same of another address, under the caller's own limit.
import { CACHE } from '../../core/http/headers.js';
import { preferredForm } from '../../core/http/accept.js';
import { wantsJson } from '../../core/http/pages.js';
import { Problem } from '../../core/http/problems.js';
import { queryParameters } from '../../core/http/query.js';
import { printable } from '../../core/http/printable.js';
import { jsonReply } from '../../core/http/respond.js';
import type { RouteDefinition } from '../../core/http/router.js';
import type { Handler, HttpReply, RequestContext } from '../../core/http/types.js';
import { parseAddress, type ParsedAddress } from '../../core/net/address.js';
import { specialUseKind } from '../../core/net/special.js';
import { echoipData, echoipJson } from './echoip.js';
import type { CallerPlace, IpFacts } from './facts.js';

/** The headers of every answer here: which of text, JSON or the page a client gets depends on `Accept`. */
const VARY = { Vary: 'Accept' } as const;

/** One line for a terminal: nothing in the data (a city's name, a network's) can act on it as a control. */
const line = (ctx: RequestContext, value: string): HttpReply => jsonReply(ctx, 200, `${printable(value)}\n`, 'text/plain; charset=utf-8', CACHE.noStore, VARY);

type PlaceField = (place: CallerPlace) => string | null;

/** The text paths that read a place, with what an answer for JSON says is missing. */
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

/**
 * A field the data does not have. A script (`city=$(curl -s host/city)`) gets what echoip gives
 * it: 200 and an empty line, so the variable is empty rather than an error sentence. A client
 * that asks for JSON gets a 404 problem saying what is missing and, for a special-use address,
 * why.
 */
function missing(ctx: RequestContext, what: string, address: ParsedAddress): HttpReply {
  if (!wantsJson(ctx)) return line(ctx, '');
  const kind = specialUseKind(address);
  throw new Problem('not_found', kind === undefined ? `No ${what} is known for ${address.text}.` : `No ${what} is known for ${address.text}: it is a ${kind} address, with no location or network on the internet.`);
}

/** Who an answer is about: the address named by `?ip=`, or the caller. */
interface Subject {
  address: ParsedAddress;
  /** The caller's own address: its place may be the edge's observation of the connection. */
  own: boolean;
}

/**
 * `?ip=`, checked before the limit (a malformed one costs no quota): an IPv4 address in four
 * dotted parts or an IPv6 address, as `parseAddress` takes them. Refused where this deployment has
 * no data of its own to look another address up in.
 */
function acceptSubject(facts: IpFacts) {
  return (ctx: RequestContext): void => {
    const { ip } = queryParameters(ctx.req.query, ['ip']);
    if (ip === undefined) return;
    const address = parseAddress(ip);
    if (address === undefined) {
      const shown = ip.length > 64 ? `${ip.slice(0, 64)}…` : ip;
      throw new Problem('invalid_parameter', `The query parameter "ip" must be an IPv4 address (four dotted parts) or an IPv6 address; got "${shown}".`);
    }
    if (!facts.othersKnown) {
      throw new Problem('not_found', 'This deployment cannot look up another address: it runs on Cloudflare Workers, which observe the caller\'s own connection and hold no location or network data to look an address up in.');
    }
    ctx.askedAbout = address;
  };
}

function subjectOf(ctx: RequestContext, facts: IpFacts): Subject {
  const address = ctx.askedAbout;
  return address === undefined ? { address: facts.address(ctx).address, own: true } : { address, own: false };
}

function placeOfSubject(ctx: RequestContext, facts: IpFacts, subject: Subject): CallerPlace {
  return subject.own ? facts.place(ctx, subject.address) : facts.placeOf(subject.address);
}

/** echoip's object for the subject (src/features/ip/echoip.ts): its place and its reverse name. */
async function echoip(ctx: RequestContext, facts: IpFacts, subject: Subject): Promise<HttpReply> {
  const place = placeOfSubject(ctx, facts, subject);
  const hostname = await hostnameOfSubject(facts, subject);
  return jsonReply(ctx, 200, echoipJson(subject.address, echoipData(subject.address, place, hostname)), 'application/json', CACHE.noStore, VARY);
}

/** The caller's own PTR, uncached; or the PTR of the address `?ip=` named (facts.ts says how). */
function hostnameOfSubject(facts: IpFacts, subject: Subject): Promise<string | null> {
  return subject.own ? facts.hostname(subject.address) : facts.hostnameOfOther(subject.address);
}

/**
 * A `?ip=` answer that asks the resolver for another address's PTR is a DNS lookup the asker
 * chose, so it counts against the `dns` limit as well as `ip` (at the `ip` limit alone,
 * three sources can drain the resolver's budget with dead reverse zones).
 */
const namesAnother = (ctx: RequestContext): 'dns' | undefined => (ctx.askedAbout !== undefined ? 'dns' : undefined);

function textRoute(path: string, facts: IpFacts, handle: Handler, alsoLimit?: (ctx: RequestContext) => 'dns' | undefined): RouteDefinition {
  return { path, GET: { limit: 'ip', plainProblems: true, accept: acceptSubject(facts), handle, ...(alsoLimit === undefined ? {} : { alsoLimit }) } };
}

export function textRoutes(facts: IpFacts): RouteDefinition[] {
  const placeRoute = ([path, what, read]: (typeof PLACE_FIELDS)[number]): RouteDefinition =>
    textRoute(path, facts, (ctx) => {
      const subject = subjectOf(ctx, facts);
      const value = read(placeOfSubject(ctx, facts, subject));
      return value === null ? missing(ctx, what, subject.address) : line(ctx, value);
    });
  return [
    textRoute('/ip', facts, (ctx) => line(ctx, subjectOf(ctx, facts).address.text)),
    ...PLACE_FIELDS.map(placeRoute),
    textRoute('/hostname', facts, (ctx) => {
      const subject = subjectOf(ctx, facts);
      return hostnameOfSubject(facts, subject).then((name) => (name === null ? missing(ctx, 'reverse name (PTR)', subject.address) : line(ctx, name)));
    }, namesAnother),
    // echoip's object, for `curl host/json | jq`; problems as everywhere else (JSON).
    { path: '/json', GET: { limit: 'ip', alsoLimit: namesAnother, accept: acceptSubject(facts), handle: (ctx) => echoip(ctx, facts, subjectOf(ctx, facts)) } },
  ];
}

/**
 * `GET /`: a browser, whose `Accept` prefers `text/html`, gets the page (`page`); a client that
 * prefers JSON gets echoip's object as /json does; any other (curl sends `*∕*`) the address and a
 * newline, as ifconfig.co does. Preference is by `Accept` weights (src/core/http/accept.ts), so
 * `text/html;q=0, text/plain` gets text. `?ip=` names another address for the text and JSON
 * answers; the page is always the caller's. All count against the `ip` limit and are never cached.
 */
export function rootRoute(facts: IpFacts, page: (ctx: RequestContext, address: ParsedAddress) => HttpReply): RouteDefinition {
  return textRoute(
    '/',
    facts,
    (ctx) => {
      const form = preferredForm(ctx, ['html', 'json']);
      if (form === 'html') return page(ctx, facts.address(ctx).address);
      const subject = subjectOf(ctx, facts);
      if (form === 'json') return echoip(ctx, facts, subject);
      return line(ctx, subject.address.text);
    },
    // Only the JSON answer looks the named address's PTR up.
    (ctx) => (preferredForm(ctx, ['html', 'json']) === 'json' ? namesAnother(ctx) : undefined),
  );
}
