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

/**
 * Forwards `from` to `to`, each chunk `delayMs` late, in order. The returned `close()` queues the
 * other side's disappearance behind what is still in flight, so a peer that answers and hangs up
 * at once still has its answer delivered first (a close on a timer of its own raced the last
 * chunk under load, and the client saw the connection reset before the answer).
 */
function forward(from: Socket, to: Socket, delayMs: number): { close(): void } {
  // One queue per direction, released in order as each chunk's time comes.
  const queue: { due: number; chunk: Buffer | 'end' | 'close' }[] = [];
  let pumping = false;
  const pump = () => {
    const head = queue[0];
    if (head === undefined) {
      pumping = false;
      return;
    }
    at(head.due, () => {
      queue.shift();
      if (head.chunk === 'end') to.end();
      // After an orderly end, `to` closes by itself once its data is flushed.
      else if (head.chunk === 'close') {
        if (!to.writableEnded) to.destroy();
      } else if (!to.destroyed) to.write(head.chunk);
      pump();
    });
  };
  const enqueue = (chunk: Buffer | 'end' | 'close') => {
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
    enqueue('end');
  });
  return { close: () => { enqueue('close'); } };
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
      upstream.on('close', () => sockets.delete(upstream));
      // Errors end in 'close', handled below; until the upstream connects, either side's close
      // takes the other down at once.
      upstream.on('error', () => undefined);
      client.on('error', () => undefined);
      const early = () => { upstream.destroy(); client.destroy(); };
      upstream.once('close', early);
      client.once('close', early);
      upstream.once('connect', () => {
        upstream.off('close', early);
        client.off('close', early);
        // A side that closes takes the other down only after what it sent has been delivered.
        const toUpstream = forward(client, upstream, oneWayMs);
        const toClient = forward(upstream, client, oneWayMs);
        upstream.on('close', () => { toClient.close(); });
        client.on('close', () => { toUpstream.close(); });
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
