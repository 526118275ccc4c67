// A FAKE for a TURN server behind a firewall that drops UDP: a socket on loopback that takes
// datagrams and never answers. No real peer is silent on demand.
import { createSocket } from 'node:dgram';
import { once } from 'node:events';

export interface SilentUdp {
  port: number;
  close(): void;
}

export async function startSilentUdp(): Promise<SilentUdp> {
  const socket = createSocket('udp4');
  socket.bind(0, '127.0.0.1');
  await once(socket, 'listening');
  return { port: socket.address().port, close: () => socket.close() };
}
