// A real redis-server on loopback for the shared-limit suites: no persistence, its own port,
// stoppable and restartable on the same port (a Redis outage in the middle of a run).
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { Redis } from 'ioredis';
import { freePort } from './wait.js';

export interface RedisServer {
  port: number;
  url: string;
  /** A plain client for inspecting keys. */
  client(): Redis;
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

/** `args` are extra redis-server options (`['--requirepass', 'x']`). */
export async function startRedis(args: string[] = []): Promise<RedisServer> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const clients: Redis[] = [];
  const start = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...args], { stdio: 'ignore' });
    const password = args[args.indexOf('--requirepass') + 1];
    const probe = new Redis({ port, host: '127.0.0.1', lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0, password: args.includes('--requirepass') ? password : undefined });
    probe.on('error', () => undefined);
    for (let i = 0; i < 100; i++) {
      try {
        await probe.connect();
        await probe.ping();
        probe.disconnect();
        return;
      } catch {
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    throw new Error('redis-server did not start');
  };
  const stop = async () => {
    if (child === undefined || child.exitCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
    child = undefined;
  };
  await start();
  return {
    port,
    url: `redis://127.0.0.1:${String(port)}`,
    client: () => {
      const c = new Redis({ port, host: '127.0.0.1' });
      c.on('error', () => undefined);
      clients.push(c);
      return c;
    },
    stop,
    start,
    close: async () => {
      for (const c of clients) c.disconnect();
      await stop();
    },
  };
}
