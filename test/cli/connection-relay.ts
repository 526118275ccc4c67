// A TCP relay in front of the real server that notes, for each connection it accepts, the
// client's address and port and the HTTP/1.1 request lines sent on it: what the server's side of
// the wire sees, which the server's own logs keep out (no client address in logs). It forwards
// every byte untouched; it is a window on the connections, not a stand-in for the server.
import { once } from 'node:events';
import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';

export interface SeenConnection {
  address: string;
  port: number;
  /** `GET /__down?bytes=…`, `POST /__up`, … in the order sent. */
  requests: string[];
}

export interface ConnectionRelay {
  /** The relay's origin, as a URL (`http://127.0.0.1:port` or `http://[::1]:port`). */
  url: string;
  port: number;
  connections: SeenConnection[];
  close(): Promise<void>;
}

/** A request line at the start of a request: the upload bodies are ASCII zeros, which never hold one. */
const REQUEST_LINE = /(GET|POST) (\S+) HTTP\/1\.1\r\n/g;

/** Listens on `host` (127.0.0.1 or ::1) and forwards each connection to the server at `target`. */
export async function startConnectionRelay(host: string, target: { host: string; port: number }): Promise<ConnectionRelay> {
  const connections: SeenConnection[] = [];
  const open = new Set<Socket>();
  const server = createServer((client) => {
    const seen: SeenConnection = { address: client.remoteAddress ?? '', port: client.remotePort ?? 0, requests: [] };
    connections.push(seen);
    const upstream = createConnection(target);
    open.add(client).add(upstream);
    let tail = '';
    client.on('data', (chunk: Buffer) => {
      const text = tail + chunk.toString('latin1');
      let end = 0;
      for (const m of text.matchAll(REQUEST_LINE)) {
        seen.requests.push(`${m[1] ?? ''} ${m[2] ?? ''}`);
        end = m.index + m[0].length;
      }
      // A request line split across two chunks is found in the next: keep the end that may start one.
      tail = text.slice(end).slice(-256);
    });
    client.pipe(upstream).pipe(client);
    const close = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
  });
  server.listen(0, host);
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${String(port)}`,
    port,
    connections,
    close: async () => {
      for (const s of open) s.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}

/** The connections that carried a transfer of the load (`/__down` of more than 0 bytes, or `/__up`). */
export function loadConnections(connections: readonly SeenConnection[], path: '/__down' | '/__up'): SeenConnection[] {
  return connections.filter((c) => c.requests.some((r) => r.includes(` ${path}`) && !r.includes('bytes=0')));
}
