import type { IncomingMessage } from 'node:http';
import { Http2ServerRequest } from 'node:http2';
import type { TLSSocket } from 'node:tls';
import type { ConnectionFacts } from '../../../core/http/connection.js';
import { PROXIED, type ProxiedSocket } from './proxy-protocol.js';

/**
 * The HTTP version this connection speaks. An Http2ServerRequest came over an HTTP/2 session;
 * anything else is an HTTP/1 message, whatever version its request line names: Node's parser
 * accepts `HTTP/2.0` (and `HTTP/0.9`) there, but HTTP/2 is never a text request line (RFC 9113
 * §3; its preface is handled by the HTTP/2 server), so an HTTP/1 message naming 2.0 is not
 * HTTP/2, and it names no HTTP/1 version either: not observed, null.
 */
function protocolOf(incoming: IncomingMessage | Http2ServerRequest): string | null {
  if (incoming instanceof Http2ServerRequest) return 'HTTP/2';
  switch (incoming.httpVersion) {
    case '1.0':
      return 'HTTP/1.0';
    case '1.1':
      return 'HTTP/1.1';
    default:
      return null;
  }
}

/**
 * Node's side of the connection port: the socket's peer, HTTP version and TLS version. Behind
 * a PROXY protocol header the peer is the client it names (none when it names none); the
 * protocol and TLS version are what this server observed when it terminates TLS itself (then
 * HTTP reaches it end to end), else what the proxy's v2 TLVs say, else null: never a guess.
 */
export function nodeConnection(incoming: IncomingMessage | Http2ServerRequest): ConnectionFacts {
  const socket = incoming.socket as Partial<TLSSocket> & { _parent?: ProxiedSocket };
  const encrypted = socket.encrypted === true;
  const ownTls = encrypted ? (socket.getProtocol?.() ?? null) : null;
  const proxied = (socket as ProxiedSocket)[PROXIED] ?? socket._parent?.[PROXIED];
  if (proxied !== undefined) {
    return {
      peerAddress: proxied.sourceAddress,
      httpProtocol: encrypted ? protocolOf(incoming) : proxied.httpProtocol,
      tlsVersion: ownTls ?? proxied.tlsVersion,
      proxied: { proxyAddress: socket.remoteAddress },
    };
  }
  return { peerAddress: socket.remoteAddress, httpProtocol: protocolOf(incoming), tlsVersion: ownTls };
}
