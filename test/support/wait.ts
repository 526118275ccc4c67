// Small helpers the process-level suites share: a free loopback port, and polling for a
// condition that another process brings about.
import { once } from 'node:events';
import { createServer } from 'node:net';

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

/** Polls `check` until it holds or `ms` pass; returns its last answer. */
export async function eventually(check: () => boolean | Promise<boolean>, ms: number, everyMs = 25): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  return check();
}
