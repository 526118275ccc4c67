// A TCP relay that adds latency in user space (this kernel has no netem qdisc): every chunk is
// held `oneWayMs` in each direction, so a request/response round trip gains 2 × oneWayMs. A
// new connection is also held for one round trip before anything is forwarded, standing in
// for the handshake a real path would pay: a request on a cold connection costs two round
// trips, on a warm one, one. Test-only; it is a fault injector, not a peer under test.
import { once } from 'node:events';
import { createConnection, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

export interface DelayRelay {
  port: number;
  close(): Promise<void>;
}

/**
 * Runs `fn` no earlier than `due` (performance.now() time). Node's timers can fire up to a
 * millisecond early against the monotonic clock (libuv caches the loop's time), so the last
 * stretch is finished with setImmediate: the injected delay is a floor, never a hair less.
 */
function at(due: number, fn: () => void): void {
  const left = due - performance.now();
  if (left <= 0) fn();
  else if (left > 2) setTimeout(() => { at(due, fn); }, left - 1);
  else setImmediate(() => { at(due, fn); });
}

function forward(from: Socket, to: Socket, delayMs: number): void {
  // One queue per direction, released in order as each chunk's time comes.
  const queue: { due: number; chunk: Buffer | null }[] = [];
  let pumping = false;
  const pump = () => {
    const head = queue[0];
    if (head === undefined) {
      pumping = false;
      return;
    }
    at(head.due, () => {
      queue.shift();
      if (head.chunk === null) to.end();
      else if (!to.destroyed) to.write(head.chunk);
      pump();
    });
  };
  const enqueue = (chunk: Buffer | null) => {
    queue.push({ due: performance.now() + delayMs, chunk });
    if (!pumping) {
      pumping = true;
      pump();
    }
  };
  from.on('data', (chunk: Buffer) => {
    enqueue(chunk);
  });
  from.on('end', () => {
    enqueue(null);
  });
}

export async function startDelayRelay(target: { host: string; port: number }, oneWayMs: number): Promise<DelayRelay> {
  const sockets = new Set<Socket>();
  const server: Server = createServer({ pauseOnConnect: true }, (client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    at(performance.now() + 2 * oneWayMs, () => {
      if (client.destroyed) return;
      const upstream = createConnection(target);
      sockets.add(upstream);
      // A side that closes takes the other down only after what it sent has been delivered.
      upstream.on('close', () => {
        sockets.delete(upstream);
        setTimeout(() => client.destroy(), oneWayMs + 1);
      });
      client.on('close', () => setTimeout(() => upstream.destroy(), oneWayMs + 1));
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
      upstream.once('connect', () => {
        forward(client, upstream, oneWayMs);
        forward(upstream, client, oneWayMs);
        client.resume();
      });
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}
