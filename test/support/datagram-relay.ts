// A UDP relay in front of a real TURN server that notes, for each datagram a client sends
// through it, the client's address and the STUN message type: what the TURN server's side of the
// wire sees, which coturn's log under the documented configuration does not name. Each
// client address and port gets an upstream socket of its own, so the TURN server tells clients
// apart as it would without the relay; every datagram is forwarded untouched both ways.
import { createSocket, type Socket } from 'node:dgram';
import { once } from 'node:events';

export interface SeenDatagram {
  address: string;
  port: number;
  /** The STUN message type (RFC 8489 §5: the first two octets), e.g. 0x0003 for an Allocate request. */
  type: number;
}

export interface DatagramRelay {
  host: string;
  port: number;
  /** Every datagram clients sent through the relay, in order. */
  datagrams: SeenDatagram[];
  close(): Promise<void>;
}

/** Listens on `host` (an IPv4 address) and forwards each client's datagrams to `target`. */
export async function startDatagramRelay(host: string, target: { host: string; port: number }): Promise<DatagramRelay> {
  const datagrams: SeenDatagram[] = [];
  const upstreams = new Map<string, Socket>();
  const listener = createSocket('udp4');
  listener.on('error', () => undefined);
  const upstreamFor = (address: string, port: number): Socket => {
    const key = `${address}:${String(port)}`;
    let upstream = upstreams.get(key);
    if (upstream === undefined) {
      upstream = createSocket('udp4');
      upstream.on('error', () => undefined);
      upstream.on('message', (reply: Buffer) => {
        listener.send(reply, port, address);
      });
      upstreams.set(key, upstream);
    }
    return upstream;
  };
  listener.on('message', (packet: Buffer, from) => {
    datagrams.push({ address: from.address, port: from.port, type: packet.length >= 2 ? packet.readUInt16BE(0) : -1 });
    upstreamFor(from.address, from.port).send(packet, target.port, target.host);
  });
  listener.bind(0, host);
  await once(listener, 'listening');
  return {
    host,
    port: listener.address().port,
    datagrams,
    close: async () => {
      for (const upstream of upstreams.values()) upstream.close();
      listener.close();
      await once(listener, 'close');
    },
  };
}
