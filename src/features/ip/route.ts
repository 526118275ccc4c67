import { CACHE } from '../../core/http/headers.js';
import { envelope, envelopeSerialized, serialize } from '../../core/http/respond.js';
import type { RouteDefinition } from '../../core/http/router.js';
import type { IpFacts } from './facts.js';

/** `GET /v1/ip` (the API contract): the caller's connection in the v1 envelope, never cached. */
export function ipRoute(facts: IpFacts): RouteDefinition {
  // Query parameters are ignored: nothing a caller sends can name another address (docs/api.md).
  return { path: '/v1/ip', GET: { limit: 'ip', handle: (ctx) => facts.all(ctx).then((data) => envelope(ctx, data, CACHE.noStore)) } };
}

/**
 * `GET /v1/ip/families` (an addition): the deployment's origins that answer over one address
 * family each (`NETDIAG_IPV4_URL`, `NETDIAG_IPV6_URL`), null where not set. A client asks
 * `/v1/ip` of each to learn the caller's address in both families (`netdiag ip --both`); the
 * page has them in its own HTML. The same for every caller, so cacheable and unlimited, like the
 * OpenAPI document.
 */
export function familiesRoute(origins: { ipv4: string | null; ipv6: string | null }): RouteDefinition {
  const data = serialize({ ipv4_url: origins.ipv4, ipv6_url: origins.ipv6 });
  return { path: '/v1/ip/families', GET: { limit: null, handle: (ctx) => envelopeSerialized(ctx, data, CACHE.families) } };
}
