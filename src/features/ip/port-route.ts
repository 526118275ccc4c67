// `GET /port/N` (an addition, as echoip has it, off unless the operator turns it on): whether the
// caller's own address accepts a TCP connection on port N, the question of someone who has just
// forwarded a port on their router (docs/api.md, "A drop-in for ifconfig.co scripts").
import { CACHE } from '../../core/http/headers.js';
import { Problem } from '../../core/http/problems.js';
import { queryParameters } from '../../core/http/query.js';
import { jsonReply } from '../../core/http/respond.js';
import type { RouteDefinition } from '../../core/http/router.js';
import type { ParsedAddress } from '../../core/net/address.js';
import { specialUseKind } from '../../core/net/special.js';
import type { IpFacts } from './facts.js';
import type { PortCheck } from '../../core/ports/port-check.js';

const TRUST_HINT = 'If this server sits behind a proxy, tunnel or address translation on its own host, its operator lists it in NETDIAG_TRUST_PROXY so that the caller\'s own address is used.';

/**
 * Refuses an address the check must never connect to, before any connection: a special-use one
 * (RFC 6890: loopback, private, link-local, unspecified, …) or one of the host's own. Such a
 * "caller" is a proxy or tunnel the server was not told to trust, or address translation in
 * front of it, and connecting would probe the host's private services on the asker's behalf
 * (behind an untrusted local nginx, /port/N would report a Redis bound to 127.0.0.1).
 */
function refuseUncheckable(address: ParsedAddress, isOwnAddress: (address: ParsedAddress) => boolean): void {
  const kind = specialUseKind(address);
  if (kind !== undefined) {
    throw new Problem('port_check_refused', `The port check connects to no special-use address, and the address this request comes from, ${address.text}, is ${kind}. ${TRUST_HINT}`);
  }
  if (isOwnAddress(address)) {
    throw new Problem('port_check_refused', `The port check connects to no address of this server's own host, and the address this request comes from, ${address.text}, is one. ${TRUST_HINT}`);
  }
}

/** The port of the path: a whole number from 1 to 65535, written without a sign or leading zeros. */
function portOf(text: string): number {
  const port = /^[1-9][0-9]{0,4}$/.test(text) ? Number(text) : 0;
  if (port < 1 || port > 65_535) {
    const shown = text.length > 16 ? `${text.slice(0, 16)}…` : text;
    throw new Problem('invalid_parameter', `The port must be a whole number from 1 to 65535; got "${shown}".`);
  }
  return port;
}

export function portRoute(check: PortCheck, facts: IpFacts): RouteDefinition {
  return {
    path: '/port/:port',
    GET: {
      limit: 'port',
      // Refused before the limit, so a mistyped request costs no check of the caller's quota.
      accept: (ctx) => {
        if ('unavailable' in check) throw new Problem('not_found', check.unavailable);
        // Only the caller's own address is ever connected to: naming another is refused outright
        // rather than ignored, so nobody believes they checked a host they did not.
        if (queryParameters(ctx.req.query, ['ip']).ip !== undefined) {
          throw new Problem('invalid_parameter', 'The port check connects only to the address the request comes from; the query parameter "ip" is not accepted here.');
        }
        ctx.params = { port: String(portOf(ctx.params.port ?? '')) };
      },
      handle: async (ctx) => {
        if ('unavailable' in check) throw new Problem('not_found', check.unavailable);
        const { address } = facts.address(ctx);
        // After the limit: a refused check still counts, so asking in a loop learns nothing faster.
        refuseUncheckable(address, (a) => check.isOwnAddress(a));
        const port = Number(ctx.params.port);
        const reachable = await check.reach(address, port);
        // echoip's answer, field for field: ip, port, reachable.
        return jsonReply(ctx, 200, `${JSON.stringify({ ip: address.text, port, reachable }, null, 2)}\n`, 'application/json', CACHE.noStore);
      },
    },
  };
}
