// `GET /port/N` (an addition, as echoip has it, off unless the operator turns it on): whether the
// caller's own address accepts a TCP connection on port N, the question of someone who has just
// forwarded a port on their router (docs/api.md, "A drop-in for ifconfig.co scripts").
import { CACHE } from '../../core/http/headers.js';
import { Problem } from '../../core/http/problems.js';
import { queryParameters } from '../../core/http/query.js';
import { jsonReply } from '../../core/http/respond.js';
import type { RouteDefinition } from '../../core/http/router.js';
import type { ParsedAddress } from '../../core/net/address.js';
import type { IpFacts } from './facts.js';

/**
 * Whether a TCP connection to `port` at `address` is accepted within the runtime's timeout; or
 * why this server makes none (turned off, or a runtime that does not connect to callers).
 */
export type PortCheck = { reach(address: ParsedAddress, port: number): Promise<boolean> } | { unavailable: string };

/** What a server that was not given a port check says: the operator's switch. */
export const PORT_CHECK_OFF: PortCheck = { unavailable: 'The port check is off on this server; its operator turns it on with NETDIAG_PORT_CHECK=on.' };

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
        const port = Number(ctx.params.port);
        const reachable = await check.reach(address, port);
        // echoip's answer, field for field: ip, port, reachable.
        return jsonReply(ctx, 200, `${JSON.stringify({ ip: address.text, port, reachable }, null, 2)}\n`, 'application/json', CACHE.noStore);
      },
    },
  };
}
