import { parseAddress, type ParsedAddress } from './address.js';
import { forwardedChain, xForwardedForChain } from './forwarded.js';
import type { TrustPolicy } from './trust.js';
import { MAX_LIST_HEADER, listTail } from '../header-cap.js';

export type CallerResult =
  /** `forwarded`: taken from a trusted proxy's header, so the connection's own facts are that proxy's hop. */
  | { ok: true; address: ParsedAddress; forwarded: boolean }
  | { ok: false; reason: string; peer: ParsedAddress | undefined };

/**
 * The one header a trusted proxy writes (`NETDIAG_TRUST_PROXY_HEADER`). Proxies append to the
 * header they own and pass every other one through as the client sent it, so reading any
 * header but the operator's would let a client choose its own address.
 * - `x-forwarded-for`: nginx `$proxy_add_x_forwarded_for`, HAProxy `option forwardfor`, AWS ALB, most CDNs.
 * - `forwarded`: RFC 7239, for proxies configured to write it.
 * - `x-real-ip`: one address that the proxy overwrites (nginx `proxy_set_header X-Real-IP $remote_addr`).
 */
export const TRUSTED_HEADERS = ['x-forwarded-for', 'forwarded', 'x-real-ip'] as const;
export type TrustedHeader = (typeof TRUSTED_HEADERS)[number];

export function isTrustedHeader(value: string): value is TrustedHeader {
  return (TRUSTED_HEADERS as readonly string[]).includes(value);
}

/** The header's hops in order client → nearest proxy; an entry that is not an address is undefined. */
function chainOf(header: TrustedHeader, value: string): (string | undefined)[] {
  switch (header) {
    case 'x-forwarded-for':
      return xForwardedForChain(value);
    case 'forwarded':
      return forwardedChain(value);
    case 'x-real-ip': {
      const node = value.trim();
      return [node === '' ? undefined : node];
    }
  }
}

/**
 * The caller is the TCP peer, unless the peer is a trusted proxy: then it is the nearest
 * untrusted address in the one header that proxy writes, read right to left (docs/api.md,
 * /v1/ip). Headers from an untrusted peer, and every other forwarding header, are never read,
 * so a caller cannot name another address.
 *
 * `proxied` (a connection a trusted proxy introduced with a PROXY protocol header): the caller
 * is the client that header named, and no forwarding header is read, even when that client is
 * itself inside the trusted ranges; an L4 proxy writes no HTTP header, so any there is the
 * client's own. A header that named no client leaves no caller, and the proxy stands as the
 * peer (the rate-limit source) as it does when a proxy sends no usable forwarding header.
 */
export function resolveCaller(
  peerText: string | undefined,
  headers: { header(name: string): string | undefined },
  trust: TrustPolicy,
  header: TrustedHeader,
  proxied?: { proxyAddress: string | undefined },
): CallerResult {
  if (proxied !== undefined) {
    const client = peerText === undefined ? undefined : parseAddress(peerText);
    if (client !== undefined) return { ok: true, address: client, forwarded: false };
    const proxy = proxied.proxyAddress === undefined ? undefined : parseAddress(proxied.proxyAddress);
    return { ok: false, reason: 'the proxy\'s PROXY protocol header named no client address', peer: proxy };
  }
  const peer = peerText === undefined ? undefined : parseAddress(peerText);
  if (peer === undefined) return { ok: false, reason: 'the peer address is not known', peer };
  if (!trust.any || !trust.trusts(peer)) return { ok: true, address: peer, forwarded: false };

  const value = headers.header(header);
  // Only the header's last hops are parsed: the nearest untrusted one is all that is read.
  const { tail, cut } = value === undefined ? { tail: undefined, cut: false } : listTail(value);
  const chain = tail === undefined ? undefined : chainOf(header, tail);
  if (chain === undefined || chain.length === 0) {
    return { ok: false, reason: `a trusted proxy sent no ${header} header`, peer };
  }
  let leftmost: ParsedAddress | undefined;
  for (let i = chain.length - 1; i >= 0; i--) {
    const node = chain[i];
    const hop = node === undefined ? undefined : parseAddress(node);
    if (hop === undefined) {
      return { ok: false, reason: `the ${header} header holds an entry that is not an address`, peer };
    }
    if (!trust.trusts(hop)) return { ok: true, address: hop, forwarded: true };
    leftmost = hop;
  }
  if (cut) return { ok: false, reason: `the ${header} header holds more trusted hops than its last ${String(MAX_LIST_HEADER)} characters`, peer };
  // Every hop is trusted: the request started inside the trusted network, at its first hop.
  return leftmost === undefined ? { ok: false, reason: `empty ${header} header`, peer } : { ok: true, address: leftmost, forwarded: true };
}
