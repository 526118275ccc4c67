import { parseAddress, type ParsedAddress } from './address.js';
import { forwardedChain, xForwardedForChain } from './forwarded.js';
import type { TrustPolicy } from './trust.js';

export type CallerResult =
  | { ok: true; address: ParsedAddress }
  | { ok: false; reason: string; peer: ParsedAddress | undefined };

export interface ForwardingHeaders {
  forwarded: string | undefined;
  xForwardedFor: string | undefined;
}

/**
 * The caller is the TCP peer, unless the peer is a trusted proxy: then it is the nearest
 * untrusted address in `Forwarded` (RFC 7239, preferred as the standard) or `X-Forwarded-For`,
 * read right to left (SPEC-NOTES, /v1/ip). Headers from an untrusted peer are never read, so a
 * caller cannot name another address.
 */
export function resolveCaller(peerText: string | undefined, headers: ForwardingHeaders, trust: TrustPolicy): CallerResult {
  const peer = peerText === undefined ? undefined : parseAddress(peerText);
  if (peer === undefined) return { ok: false, reason: 'the peer address is not known', peer };
  if (!trust.any || !trust.trusts(peer)) return { ok: true, address: peer };

  const chain =
    headers.forwarded !== undefined
      ? forwardedChain(headers.forwarded)
      : headers.xForwardedFor !== undefined
        ? xForwardedForChain(headers.xForwardedFor)
        : undefined;
  if (chain === undefined || chain.length === 0) {
    return { ok: false, reason: 'a trusted proxy sent no forwarding header', peer };
  }
  let leftmost: ParsedAddress | undefined;
  for (let i = chain.length - 1; i >= 0; i--) {
    const node = chain[i];
    const hop = node === undefined ? undefined : parseAddress(node);
    if (hop === undefined) {
      return { ok: false, reason: 'the forwarding header holds an entry that is not an address', peer };
    }
    if (!trust.trusts(hop)) return { ok: true, address: hop };
    leftmost = hop;
  }
  // Every hop is trusted: the request started inside the trusted network, at its first hop.
  return leftmost === undefined ? { ok: false, reason: 'empty forwarding header', peer } : { ok: true, address: leftmost };
}
