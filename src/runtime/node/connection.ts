import type { IncomingMessage } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';
import type { TLSSocket } from 'node:tls';
import type { ConnectionFacts } from '../../services.js';

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

/** Node's side of the connection port: the socket's peer, HTTP version and TLS version. */
export function nodeConnection(incoming: IncomingMessage | Http2ServerRequest): ConnectionFacts {
  const socket = incoming.socket as Partial<TLSSocket>;
  const tlsVersion = socket.encrypted === true ? (socket.getProtocol?.() ?? null) : null;
  return { peerAddress: socket.remoteAddress, httpProtocol: protocolName(incoming.httpVersion), tlsVersion };
}
