// A user-space UDP relay between a TURN client and the TURN server that drops a known share of the
// datagrams the loss test is made of, and counts every one it drops: the reference a reported
// packet loss is held to. Only relayed data is dropped: Send and Data indications (what the
// command line's client sends, RFC 8656 §11) and ChannelData messages (what a browser's WebRTC
// stack sends once it has bound a channel, §12); requests and their answers pass, so the
// allocation itself never fails here. Drops follow a seeded generator, so a run is repeatable.
// What a browser's ChannelData carries is told apart (RFC 7983 §7: a first octet of 0-3 is STUN,
// 20-63 DTLS), because the page counts DTLS datagrams only (getStats' transport packetsSent and
// packetsReceived leave out the ICE checks beside them).
import { createSocket, type Socket } from 'node:dgram';
import { once } from 'node:events';

const SEND_INDICATION = 0x0016;
const DATA_INDICATION = 0x0017;

export interface LossyRelay {
  port: number;
  /** Indications dropped so far, each way. */
  dropped: { up: number; down: number };
  /** Indications passed so far, each way. */
  passed: { up: number; down: number };
  /**
   * The same per client, in the order each was first seen, with its DTLS datagrams apart. A
   * browser's loss step has two (its sending and its receiving peer connection), and its
   * messages cross the relay up from the one that sends most and down to the other:
   * browserStepLoss tells how many of its datagrams that path lost.
   */
  clients: Counts[];
  reset(): void;
  close(): void;
}

interface Counts {
  dropped: { up: number; down: number };
  passed: { up: number; down: number };
  /** Of those, the ChannelData messages that carried DTLS. */
  dtls: { dropped: { up: number; down: number }; passed: { up: number; down: number } };
}

/**
 * The DTLS datagrams of a browser's loss step on their path, up from the client that sent most
 * and down to the other: how many the sender sent and how many of them the relay dropped either
 * way (the same datagrams the page counts; these include the few of the connection's opening).
 */
export function browserStepLoss(relay: LossyRelay): { sent: number; lost: number } {
  const [a, b] = relay.clients;
  if (a === undefined || b === undefined) return { sent: 0, lost: 0 };
  const up = (c: Counts) => c.dtls.passed.up + c.dtls.dropped.up;
  const [sender, receiver] = up(a) >= up(b) ? [a, b] : [b, a];
  const lost = sender.dtls.dropped.up + receiver.dtls.dropped.down;
  return { sent: up(sender), lost };
}

/** mulberry32: a small seeded generator, uniform enough for a drop decision. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface RelayFaults {
  /**
   * After `afterUp` relayed datagrams have gone up, every one either way is dropped for `ms` (and
   * counted), as a link that goes away for a moment: what makes a WebRTC sender hold its messages
   * back and then pack them together.
   */
  outage?: { afterUp: number; ms: number };
  /**
   * Relayed datagrams going down are held from the first for this long, then sent in one go, all
   * within one turn of this process's event loop: a client in this process cannot read while
   * they arrive, and its socket's receive buffer overflows, as a busy client's would.
   */
  holdDownMs?: number;
}

export async function startLossyRelay(server: { host: string; port: number }, share: number, seed = 1, faults: RelayFaults = {}): Promise<LossyRelay> {
  const { outage, holdDownMs } = faults;
  let held: (() => void)[] | undefined;
  const seededRandom = seeded(seed);
  const front = createSocket('udp4');
  front.bind(0, '127.0.0.1');
  await once(front, 'listening');
  const dropped = { up: 0, down: 0 };
  const passed = { up: 0, down: 0 };
  let outageStart: number | undefined;
  const random = (): number => {
    if (outage === undefined) return seededRandom();
    const now = performance.now();
    if (outageStart === undefined && passed.up + dropped.up >= outage.afterUp) outageStart = now;
    return outageStart !== undefined && now - outageStart < outage.ms ? -1 : seededRandom();
  };
  /** One socket toward the server per client, so the server sees each client apart. */
  const backs = new Map<string, Socket>();
  let clients = new Map<string, Counts>();
  const countsOf = (key: string): Counts => {
    let counts = clients.get(key);
    if (counts === undefined) {
      counts = { dropped: { up: 0, down: 0 }, passed: { up: 0, down: 0 }, dtls: { dropped: { up: 0, down: 0 }, passed: { up: 0, down: 0 } } };
      clients.set(key, counts);
    }
    return counts;
  };
  const isIndication = (packet: Buffer, type: number) => packet.length >= 20 && packet.readUInt16BE(0) === type && packet.readUInt32BE(4) === 0x2112a442;
  // ChannelData: a channel number 0x4000-0x4FFF in the first two octets (RFC 8656 §12.4).
  const isChannelData = (packet: Buffer) => packet.length >= 4 && ((packet[0] ?? 0) & 0xf0) === 0x40;
  // DTLS in a ChannelData message: its first octet after the 4-octet header (RFC 7983 §7). Before
  // a channel is bound the opening's DTLS goes in Send indications, not counted here.
  const isDtls = (packet: Buffer) => isChannelData(packet) && (packet[4] ?? 0) >= 20 && (packet[4] ?? 0) <= 63;

  front.on('message', (packet: Buffer, client) => {
    const key = `${client.address}:${String(client.port)}`;
    let back = backs.get(key);
    if (back === undefined) {
      const socket = createSocket('udp4');
      socket.bind(0, '127.0.0.1');
      socket.on('message', (reply: Buffer) => {
        if (isIndication(reply, DATA_INDICATION) || isChannelData(reply)) {
          if (random() < share) {
            dropped.down += 1;
            countsOf(key).dropped.down += 1;
            if (isDtls(reply)) countsOf(key).dtls.dropped.down += 1;
            return;
          }
          passed.down += 1;
          countsOf(key).passed.down += 1;
          if (isDtls(reply)) countsOf(key).dtls.passed.down += 1;
          if (holdDownMs !== undefined) {
            if (held === undefined) {
              const queue: (() => void)[] = [];
              held = queue;
              setTimeout(() => {
                for (const send of queue) send();
              }, holdDownMs);
            }
            held.push(() => {
              front.send(reply, client.port, client.address);
            });
            return;
          }
        }
        front.send(reply, client.port, client.address);
      });
      backs.set(key, socket);
      back = socket;
    }
    if (isIndication(packet, SEND_INDICATION) || isChannelData(packet)) {
      if (random() < share) {
        dropped.up += 1;
        countsOf(key).dropped.up += 1;
        if (isDtls(packet)) countsOf(key).dtls.dropped.up += 1;
        return;
      }
      passed.up += 1;
      countsOf(key).passed.up += 1;
      if (isDtls(packet)) countsOf(key).dtls.passed.up += 1;
    }
    back.send(packet, server.port, server.host);
  });

  return {
    port: front.address().port,
    dropped,
    passed,
    get clients() {
      return [...clients.values()];
    },
    reset() {
      dropped.up = dropped.down = passed.up = passed.down = 0;
      clients = new Map();
    },
    close() {
      front.close();
      for (const socket of backs.values()) socket.close();
    },
  };
}
