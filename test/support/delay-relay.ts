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

function forward(from: Socket, to: Socket, delayMs: number): void {
  // Timers of equal duration fire in the order they were set, so chunks keep their order.
  from.on('data', (chunk: Buffer) => {
    setTimeout(() => {
      if (!to.destroyed) to.write(chunk);
    }, delayMs);
  });
  from.on('end', () => {
    setTimeout(() => to.end(), delayMs);
  });
}

export async function startDelayRelay(target: { host: string; port: number }, oneWayMs: number): Promise<DelayRelay> {
  const sockets = new Set<Socket>();
  const server: Server = createServer({ pauseOnConnect: true }, (client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    setTimeout(() => {
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
    }, 2 * oneWayMs);
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
