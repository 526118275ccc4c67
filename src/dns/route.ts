import { CACHE } from '../http/headers.js';
import { Problem } from '../http/problems.js';
import { rateLimited } from '../http/rate-limit.js';
import { envelope } from '../http/respond.js';
import type { RouteDefinition } from '../http/router.js';
import type { Handler, RequestContext } from '../http/types.js';
import type { Services } from '../services.js';
import { DnsFailure, problemFor } from './errors.js';
import { canonicalName, reverseName } from './names.js';
import { DNS_TYPES, MAX_NAME_LENGTH, isDnsType, type DnsType } from './types.js';

function single(params: URLSearchParams, key: string): string {
  const values = params.getAll(key);
  if (values.length === 0) throw new Problem('invalid_parameter', `The query parameter "${key}" is required.`);
  if (values.length > 1) throw new Problem('invalid_parameter', `The query parameter "${key}" must be given once.`);
  return values[0] ?? '';
}

/** Validates `name` and `type` (spec §4, SPEC-NOTES DNS) into the canonical question. */
export function parseQuestion(query: string): { name: string; type: DnsType } {
  const params = new URLSearchParams(query);
  const type = single(params, 'type');
  const raw = single(params, 'name');
  if (!isDnsType(type)) throw new Problem('invalid_parameter', `type must be one of ${DNS_TYPES.join(', ')}.`);
  if (raw.length < 1 || raw.length > MAX_NAME_LENGTH) {
    throw new Problem('invalid_parameter', `name must be 1 to ${MAX_NAME_LENGTH} characters; got ${raw.length}.`);
  }
  return { name: type === 'PTR' ? reverseName(raw) : canonicalName(raw), type };
}

export function dnsRoute(services: Services): RouteDefinition {
  const resolve: Handler = async (ctx: RequestContext) => {
    const name = ctx.params.name ?? '';
    const type = ctx.params.type as DnsType;
    let resolution;
    try {
      resolution = await services.dns.resolve(name, type);
    } catch (err) {
      throw err instanceof DnsFailure ? problemFor(err) : err;
    }
    const { result, maxAge } = resolution;
    // Cache-Control follows the remaining TTL; a zero TTL must not be cached (SPEC-NOTES).
    const cacheControl = maxAge > 0 ? `public, max-age=${maxAge}` : CACHE.noStore;
    return envelope(ctx, { query: { name, type }, response_code: result.responseCode, answers: result.answers }, cacheControl);
  };
  const limited = rateLimited('dns', services, resolve);

  return {
    path: '/v1/dns/resolve',
    // Bad parameters are refused before they cost the caller quota.
    GET: (ctx) => {
      const { name, type } = parseQuestion(ctx.req.query);
      ctx.params = { name, type };
      return limited(ctx);
    },
  };
}
