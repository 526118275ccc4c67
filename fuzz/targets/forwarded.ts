// Fuzz target: the forwarding headers a trusted proxy appends to (src/core/net/forwarded.ts):
// RFC 7239 `Forwarded` and `X-Forwarded-For`, read as hop lists, client first. Their contract
// (the module's comment): the client writes the left of the header and the proxy appends on the
// right, and nothing the client writes may reach into the proxy's part. Total functions: a list
// whose entries are host text or undefined (a break in the chain), never a throw. Also through
// resolveCaller, which parses only the header's last 1024 characters.
import { resolveCaller } from '../../src/core/net/caller-address.js';
import { forwardedChain, xForwardedForChain } from '../../src/core/net/forwarded.js';
import { parseTrustList } from '../../src/core/net/trust.js';
import { check, json, total } from '../invariant.js';

/**
 * What a proxy appends, in the forms RFC 7239 §4 and §7.4 show (an IPv4 node, a quoted IPv6
 * node with a port, more pairs after `for`), with the address the chain must end with.
 */
const FORWARDED_APPENDS = [
  { element: 'for=192.0.2.60', address: '192.0.2.60' },
  { element: 'for="[2001:db8:cafe::17]:4711"', address: '2001:db8:cafe::17' },
  { element: 'for="192.0.2.43:443";proto=https;by=203.0.113.43', address: '192.0.2.43' },
];
const X_FORWARDED_FOR_APPENDS = ['192.0.2.60', '2001:db8:cafe::17'];

type Chain = (string | undefined)[];

const LOOPBACK = parseTrustList('loopback');

/** The caller resolveCaller finds behind a trusted proxy on loopback that sent `value` as its `name` header. */
const callerBehind = (name: 'forwarded' | 'x-forwarded-for', value: string) =>
  total('forwarded/never-throws', () => resolveCaller('127.0.0.1', { header: (asked) => (asked === name ? value : undefined) }, LOOPBACK, name));

function checkShape(header: string, chain: Chain, name: string): void {
  check(Array.isArray(chain) && chain.every((hop) => hop === undefined || typeof hop === 'string'), `forwarded/${name}-shape`, () => json(chain));
  // Every hop comes out of the header's own text: with no quoted-pair to unescape (RFC 9110
  // §5.6.4), each is a piece of it, never text the parser made up.
  if (!header.includes('\\')) {
    for (const hop of chain) check(hop === undefined || header.includes(hop), `forwarded/${name}-hops-from-the-header`, () => `${JSON.stringify(hop)} is not in ${JSON.stringify(header)}`);
  }
}

export function fuzz(data: Buffer): void {
  // Node and Workers hand header values over as latin1 text (one character per byte).
  const header = data.toString('latin1');

  checkShape(header, total('forwarded/never-throws', () => forwardedChain(header)), 'forwarded');
  for (const { element, address } of FORWARDED_APPENDS) {
    // Proxies append `, element`, or a field line of their own that HTTP joins with ", " (RFC 9110 §5.3).
    const last = total('forwarded/never-throws', () => forwardedChain(`${header}, ${element}`)).at(-1);
    // An unclosed quoted-string in the client's part may make the rest one malformed element: a
    // break (undefined) fails closed; any other address would be the client's choice.
    check(last === address || last === undefined, 'forwarded/proxy-part-is-the-proxys', () => `${JSON.stringify(header)} + ${element} ends the chain with ${JSON.stringify(last)}`);
  }

  const xff = total('forwarded/never-throws', () => xForwardedForChain(header));
  checkShape(header, xff, 'x-forwarded-for');
  // One hop per comma-separated entry: X-Forwarded-For has no quoting.
  check(xff.length === header.split(',').length, 'forwarded/x-forwarded-for-shape', () => `${String(xff.length)} hops for ${JSON.stringify(header)}`);
  for (const address of X_FORWARDED_FOR_APPENDS) {
    const last = total('forwarded/never-throws', () => xForwardedForChain(`${header}, ${address}`)).at(-1);
    check(last === address, 'forwarded/proxy-part-is-the-proxys', () => `X-Forwarded-For ${JSON.stringify(header)} + ${address} ends with ${JSON.stringify(last)}`);
  }

  // End to end, as the caller is resolved (caller-address.ts), also with the client's text
  // repeated past the 1024 characters of which only the tail is parsed (header-cap.ts), so the
  // cut falls anywhere in it: the caller is the address the proxy appended, or there is none.
  const long = header === '' ? header : header.repeat(Math.ceil(1100 / header.length));
  for (const client of [header, long]) {
    for (const { element, address } of FORWARDED_APPENDS) {
      const caller = callerBehind('forwarded', `${client}, ${element}`);
      check(!caller.ok || caller.address.text === address, 'forwarded/caller-is-the-proxys-hop', () => `Forwarded ${JSON.stringify(client.slice(-200))} + ${element}: ${caller.ok ? caller.address.text : ''}`);
    }
    for (const address of X_FORWARDED_FOR_APPENDS) {
      const caller = callerBehind('x-forwarded-for', `${client}, ${address}`);
      check(caller.ok && caller.address.text === address, 'forwarded/caller-is-the-proxys-hop', () => `X-Forwarded-For ${JSON.stringify(client.slice(-200))} + ${address}: ${json(caller)}`);
    }
  }
}
