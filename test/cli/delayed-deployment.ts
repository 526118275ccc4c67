// A real netdiag server behind a small HTTP proxy that holds every request a set time in user
// space before passing it on (this kernel has no netem qdisc), and notes each request's path and client address: a
// "deployment" 5, 30 or 80 ms away, and a record of what a command asked of it. Test-only: a
// fault injector in front of the real server, not a peer under test.
import { once } from 'node:events';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LOOPBACK_TRANSFERS, startTestServer, type TestServer } from '../support/server.js';

export interface DelayedDeployment {
  /** The proxy's URL: what a list names and a command is given. */
  url: string;
  /** The paths asked of it so far, query included. */
  paths(): string[];
  /** Each request so far as `address path`: the client address it came from. */
  asked(): string[];
  close(): Promise<void>;
}

/** A proxy to `target` that holds each request `delayMs` before forwarding it. */
async function delayingProxy(target: TestServer, delayMs: number): Promise<{ server: Server; paths: string[]; asked: string[] }> {
  const paths: string[] = [];
  const asked: string[] = [];
  const server = createServer((req, res) => {
    paths.push(req.url ?? '');
    asked.push(`${req.socket.remoteAddress ?? ''} ${req.url ?? ''}`);
    setTimeout(() => {
      const upstream = request({ host: '127.0.0.1', port: target.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      upstream.on('error', () => res.destroy());
      req.pipe(upstream);
    }, delayMs);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, paths, asked };
}

/** A real netdiag server (with `env`) `delayMs` away. */
export async function startDelayedDeployment(delayMs: number, env: Record<string, string> = {}): Promise<DelayedDeployment> {
  const target = await startTestServer({ ...LOOPBACK_TRANSFERS, ...env });
  const { server, paths, asked } = await delayingProxy(target, delayMs);
  return {
    url: `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`,
    paths: () => [...paths],
    asked: () => [...asked],
    close: async () => {
      server.closeAllConnections();
      server.close();
      await target.close();
    },
  };
}
