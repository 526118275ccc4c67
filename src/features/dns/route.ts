import { CACHE } from '../../core/http/headers.js';
import { Problem } from '../../core/http/problems.js';
import { queryParameters } from '../../core/http/query.js';
import { envelopeSerialized, serialize, type Serialized } from '../../core/http/respond.js';
import type { RouteDefinition } from '../../core/http/router.js';
import type { HttpReply, RequestContext } from '../../core/http/types.js';
import { problemFor } from './failure-problems.js';
import { canonicalName, reverseName } from '../../engines/dns/names.js';
import type { Resolution, Resolver } from '../../engines/dns/resolver.js';
import { DNS_TYPES, MAX_NAME_LENGTH, isDnsType, type DnsResult, type DnsType } from '../../common/dns-types.js';
import { DnsFailure } from '../../core/ports/dns-transport.js';
import { reverseBlockOf } from '../../core/net/reverse.js';
import { specialUseKindOfBlock } from '../../core/net/special.js';

const required = (key: string): Problem => new Problem('invalid_parameter', `The query parameter "${key}" is required.`);

/**
 * Validates `name` and `type` (the API contract, docs/api.md, "DNS") into the canonical question. One fault is
 * reported, the most specific first: a value that was sent and is wrong (its length, then the
 * type, then the name's form, which depends on the type) before a parameter that is missing, and
 * `name`, the subject of the question, before `type`.
 */
function parseQuestion(query: string): { raw: string; name: string; type: DnsType } {
  const { name: raw, type } = queryParameters(query, ['name', 'type']);
  if (raw !== undefined && (raw.length < 1 || raw.length > MAX_NAME_LENGTH)) {
    throw new Problem('invalid_parameter', `name must be 1 to ${MAX_NAME_LENGTH} characters; got ${raw.length}.`);
  }
  if (type !== undefined && !isDnsType(type)) throw new Problem('invalid_parameter', `type must be one of ${DNS_TYPES.join(', ')}.`);
  if (raw === undefined) throw required('name');
  if (type === undefined) throw required('type');
  return { raw, name: type === 'PTR' ? reverseName(raw) : canonicalName(raw), type };
}

/**
 * Refuses a question about a special-use address's reverse zone, whichever way it is spelt: a PTR
 * of `10.0.0.5` or `::ffff:10.0.0.5`, or any type asked of a name under `10.in-addr.arpa` (the
 * same rule as `/v1/ip?ip=`, and the same switch, NETDIAG_IP_PARAM_SPECIAL_PTR): a resolver may
 * hold private reverse zones (RFC 6303) that are nobody else's business. The check is made on
 * the canonical name, the one the resolver would be asked.
 */
function refuseSpecialReverse(raw: string, name: string, type: DnsType): void {
  const block = reverseBlockOf(name);
  const kind = block === undefined ? undefined : specialUseKindOfBlock(block);
  if (kind === undefined) return;
  const what = type === 'PTR' ? `${raw} is a ${kind} address` : `${name} lies in the reverse zone of ${kind} addresses`;
  throw new Problem('invalid_parameter', `${what}: this server does not ask its resolver about special-use addresses, whose reverse zones belong to the networks that use them (RFC 6303). The operator can allow it with NETDIAG_IP_PARAM_SPECIAL_PTR.`);
}

/** `specialUsePtr`: questions about special-use reverse zones are asked too (OperatorOptions.specialUsePtr). */
export function dnsRoute(resolver: Resolver, options: { specialUsePtr: boolean } = { specialUsePtr: false }): RouteDefinition {
  // A cached result keeps its identity for a whole second (see DnsCache), so its serialised
  // form is made once per second per name instead of once per request.
  const serialized = new WeakMap<DnsResult, Serialized>();
  const serializeResult = (ctx: RequestContext, result: DnsResult): Serialized => {
    const { name, type } = ctx.params;
    return serialize({ query: { name, type }, response_code: result.responseCode, answers: result.answers });
  };

  const reply = (ctx: RequestContext, data: Serialized, maxAge: number): HttpReply => {
    // Cache-Control follows the remaining TTL; a zero TTL must not be cached (docs/api.md).
    // `public`, as the contract has it: a shared cache may serve the answer, replaying only a
    // random request id and another caller's RateLimit counts with it (docs/api.md, "DNS cache").
    return envelopeSerialized(ctx, data, maxAge > 0 ? `public, max-age=${maxAge}` : CACHE.noStore);
  };

  /**
   * A result from the upstream is serialised for its own request only: the cache answers every
   * later one with an aged copy of another identity, so remembering this one's JSON would keep it
   * for nothing as long as the entry lives (about a third of a one-answer entry's heap: 10 000
   * names asked once each held 2.1 MB of such JSON in a heap snapshot after the mixed load).
   */
  const fresh = (ctx: RequestContext, { result, maxAge }: Resolution): HttpReply => reply(ctx, serializeResult(ctx, result), maxAge);

  const cached = (ctx: RequestContext, { result, maxAge }: Resolution): HttpReply => {
    let data = serialized.get(result);
    if (data === undefined) {
      data = serializeResult(ctx, result);
      serialized.set(result, data);
    }
    return reply(ctx, data, maxAge);
  };

  const fail = (err: unknown): never => {
    throw err instanceof DnsFailure ? problemFor(err) : err;
  };

  return {
    path: '/v1/dns/resolve',
    GET: {
      limit: 'dns',
      // Bad parameters are refused before they cost the caller quota.
      accept: (ctx) => {
        const { raw, name, type } = parseQuestion(ctx.req.query);
        if (!options.specialUsePtr) refuseSpecialReverse(raw, name, type);
        ctx.params = { name, type };
      },
      handle: (ctx) => {
        const resolution = resolver.resolve(ctx.params.name ?? '', ctx.params.type as DnsType);
        return resolution instanceof Promise ? resolution.then((r) => fresh(ctx, r), fail) : cached(ctx, resolution);
      },
    },
  };
}
