import type { IncomingMessage } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';
import type { TLSSocket } from 'node:tls';
import type { ConnectionFacts } from '../../services.js';
import { PROXIED, type ProxiedSocket } from './proxy-protocol.js';

function protocolName(httpVersion: string): string | null {
  switch (httpVersion) {
    case '1.0':
      return 'HTTP/1.0';
    case '1.1':
      return 'HTTP/1.1';
    case '2.0':
      return 'HTTP/2';
    default:
      return null;
  }
}

/**
 * Node's side of the connection port: the socket's peer, HTTP version and TLS version. Behind
 * a PROXY protocol header the peer is the client it names; the protocol and TLS version are
 * what this server observed when it terminates TLS itself (then HTTP reaches it end to end),
 * else what the proxy's v2 TLVs say, else null: never a guess.
 */
export function nodeConnection(incoming: IncomingMessage | Http2ServerRequest): ConnectionFacts {
  const socket = incoming.socket as Partial<TLSSocket> & { _parent?: ProxiedSocket };
  const encrypted = socket.encrypted === true;
  const ownTls = encrypted ? (socket.getProtocol?.() ?? null) : null;
  const proxied = (socket as ProxiedSocket)[PROXIED] ?? socket._parent?.[PROXIED];
  if (proxied !== undefined) {
    return {
      peerAddress: proxied.sourceAddress,
      httpProtocol: encrypted ? protocolName(incoming.httpVersion) : proxied.httpProtocol,
      tlsVersion: ownTls ?? proxied.tlsVersion,
    };
  }
  return { peerAddress: socket.remoteAddress, httpProtocol: protocolName(incoming.httpVersion), tlsVersion: ownTls };
}
