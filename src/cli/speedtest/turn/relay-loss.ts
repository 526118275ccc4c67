// Packet loss through the deployment's TURN server, without WebRTC: one allocation, a permission
// for its own relayed address, then numbered datagrams sent to that address in Send indications
// (RFC 8656 §11). The server relays each from the relayed address to itself and hands it back in a
// Data indication, so a datagram crosses the path to the TURN server twice, as the page's speed-test library's
// do between its two relayed peer connections. Paced like the speed-test library's packet-loss step: batches
// of 10 every 10 ms, then up to 3 s for stragglers.
import { createSocket, type Socket } from 'node:dgram';
import type { Binding } from '../../api/source.js';
import { once } from 'node:events';
import { lookup } from 'node:dns/promises';
import { readFile } from 'node:fs/promises';
import { ATTR, TYPE, decode, encode, errorOf, longTermKey, newTransactionId, readXorAddress, xorAddress, type Address, type Message } from './stun.js';

interface TurnCredentials {
  urls: string[];
  username: string;
  credential: string;
}

export interface LossPlan {
  datagrams: number;
  batchSize: number;
  batchEveryMs: number;
  /** How long to wait for datagrams still on their way after the last is sent. */
  waitMs: number;
  /** Deadline of each request to the TURN server, retransmitted within it (RFC 8489 §6.2.1). */
  requestTimeoutMs: number;
}

/** The page's speed-test library's packet-loss step (batchSize 10, batchWaitTime 10, responsesWaitTime 3000). */
const LIBRARY_LOSS_PLAN: LossPlan = { datagrams: 1000, batchSize: 10, batchEveryMs: 10, waitMs: 3000, requestTimeoutMs: 5000 };

export interface LossResult {
  server: string;
  sent: number;
  received: number;
  /** Percent of the datagrams sent that did not come back. */
  lossPercent: number;
  /** Datagrams this computer failed to send (the send's callback had an error: ENOBUFS, EAGAIN…), by error code. */
  notSent: Record<string, number>;
  /**
   * Datagrams that reached this computer and were dropped at the socket's receive buffer, from
   * the kernel's own count (Linux's /proc/net/udp); undefined where it cannot be read.
   */
  droppedHere: number | undefined;
}

/**
 * Why the loss counted is not the network's, or undefined when it is: a datagram this computer
 * could not send, or dropped on arrival because the client was too slow to read it, would be
 * counted as lost on the way.
 */
export function lossUntrustedHere(r: Pick<LossResult, 'sent' | 'notSent' | 'droppedHere'>): string | undefined {
  const failed = Object.values(r.notSent).reduce((a, b) => a + b, 0);
  const why: string[] = [];
  if (failed > 0) why.push(`${String(failed)} of the ${String(r.sent)} datagrams could not be sent from this computer (${Object.keys(r.notSent).sort().join(', ')})`);
  if ((r.droppedHere ?? 0) > 0) why.push(`${String(r.droppedHere)} that came back were dropped by this computer before the client read them (its socket's receive buffer was full)`);
  return why.length === 0 ? undefined : `${why.join('; ')}, so the count would take them for the network's`;
}

/**
 * Datagrams the kernel dropped at this UDP port's receive buffer (the `drops` column of
 * /proc/net/udp and udp6, Linux); undefined elsewhere or when the socket is not listed.
 */
async function socketDrops(port: number): Promise<number | undefined> {
  let drops: number | undefined;
  for (const table of ['/proc/net/udp', '/proc/net/udp6']) {
    const text = await readFile(table, 'utf8').catch(() => '');
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      const local = fields[1]?.split(':')[1];
      const count = Number(fields.at(-1));
      if (local !== undefined && Number.parseInt(local, 16) === port && Number.isInteger(count)) drops = (drops ?? 0) + count;
    }
  }
  return drops;
}

/** Why loss was not measured: said to the person, never reported as 0%. */
export class LossNotMeasured extends Error {}

/** Marks a datagram as this test's: 'ndlp' and a sequence number. */
const TAG = 0x6e646c70;

interface TurnTarget {
  host: string;
  port: number;
}

/** The host and port of a `turn:` URI (RFC 7065); other transports are said to be out of reach. */
function turnTarget(uri: string): TurnTarget {
  const match = /^(turns?):(\[[^\]]+\]|[^:?]+)(?::(\d+))?(?:\?transport=(udp|tcp))?$/.exec(uri);
  if (match === null) throw new LossNotMeasured(`the TURN server's address "${uri}" is not a turn: URI`);
  if (match[1] === 'turns' || match[4] === 'tcp') throw new LossNotMeasured(`the TURN server is offered over ${match[1] === 'turns' ? 'TLS' : 'TCP'} only (${uri}), and this client measures over UDP`);
  return { host: (match[2] ?? '').replace(/^\[|\]$/g, ''), port: Number(match[3] ?? 3478) };
}

class TurnSession {
  readonly #socket: Socket;
  readonly #target: Address;
  readonly #pending = new Map<string, (message: Message) => void>();
  onData: (data: Buffer) => void = () => undefined;
  #key: Buffer | undefined;
  #realm = '';
  #nonce = '';

  constructor(socket: Socket, target: Address, readonly credentials: TurnCredentials) {
    this.#socket = socket;
    this.#target = target;
    socket.on('message', (packet: Buffer, from) => {
      if (from.port !== target.port) return;
      const message = decode(packet);
      if (message === undefined) return;
      if (message.type === TYPE.dataIndication) {
        const data = message.attributes.get(ATTR.data);
        if (data !== undefined) this.onData(data);
        return;
      }
      this.#pending.get(message.transactionId.toString('hex'))?.(message);
    });
  }

  /** One request, retransmitted at 500 ms, doubling, until answered or the deadline (RFC 8489 §6.2.1). */
  async #request(type: number, attributes: [number, Buffer][], timeoutMs: number, authenticated: boolean): Promise<Message> {
    const id = newTransactionId();
    const auth: [number, Buffer][] = authenticated
      ? [[ATTR.username, Buffer.from(this.credentials.username)], [ATTR.realm, Buffer.from(this.#realm)], [ATTR.nonce, Buffer.from(this.#nonce)]]
      : [];
    const packet = encode(type, id, [...attributes, ...auth], authenticated ? this.#key : undefined);
    return new Promise<Message>((resolve, reject) => {
      let wait = 500;
      let timer: ReturnType<typeof setTimeout> | undefined;
      const deadline = setTimeout(() => {
        clearTimeout(timer);
        this.#pending.delete(id.toString('hex'));
        reject(new LossNotMeasured(`the TURN server ${this.#target.address}:${String(this.#target.port)} did not answer over UDP within ${String(timeoutMs / 1000)} s (a firewall, a VPN or a network that blocks UDP)`));
      }, timeoutMs);
      const send = () => {
        this.#socket.send(packet, this.#target.port, this.#target.address);
        timer = setTimeout(send, wait);
        wait *= 2;
      };
      this.#pending.set(id.toString('hex'), (message) => {
        clearTimeout(deadline);
        clearTimeout(timer);
        this.#pending.delete(id.toString('hex'));
        resolve(message);
      });
      send();
    });
  }

  /**
   * A request with the long-term credential mechanism (RFC 8489 §9.2): asked once without, to
   * learn the realm and nonce from the 401, then with MESSAGE-INTEGRITY; a stale nonce (438) is
   * taken and the request made again.
   */
  async #authenticated(type: number, attributes: [number, Buffer][], timeoutMs: number): Promise<Message> {
    let reply = this.#key === undefined ? await this.#request(type, attributes, timeoutMs, false) : await this.#request(type, attributes, timeoutMs, true);
    for (let attempt = 0; attempt < 2; attempt++) {
      const error = errorOf(reply);
      if (error === undefined || (error.code !== 401 && error.code !== 438)) break;
      const realm = reply.attributes.get(ATTR.realm);
      const nonce = reply.attributes.get(ATTR.nonce);
      if (realm === undefined || nonce === undefined) break;
      if (error.code === 401 && this.#key !== undefined) break; // the credentials themselves were refused
      this.#realm = realm.toString('utf8');
      this.#nonce = nonce.toString('utf8');
      this.#key = longTermKey(this.credentials.username, this.#realm, this.credentials.credential);
      reply = await this.#request(type, attributes, timeoutMs, true);
    }
    return reply;
  }

  async allocate(timeoutMs: number): Promise<Address> {
    // REQUESTED-TRANSPORT: UDP, protocol number 17 in the first octet (RFC 8656 §18.7).
    const reply = await this.#authenticated(TYPE.allocateRequest, [[ATTR.requestedTransport, Buffer.from([17, 0, 0, 0])]], timeoutMs);
    const relayed = reply.attributes.get(ATTR.xorRelayedAddress);
    if (reply.type !== TYPE.allocateSuccess || relayed === undefined) throw new LossNotMeasured(`the TURN server refused an allocation: ${describe(reply)}`);
    return readXorAddress(relayed, reply.transactionId);
  }

  async permit(peer: Address, timeoutMs: number): Promise<void> {
    const reply = await this.#authenticated(TYPE.createPermissionRequest, [[ATTR.xorPeerAddress, xorAddress(peer, newTransactionId())]], timeoutMs);
    if (reply.type !== TYPE.createPermissionSuccess) throw new LossNotMeasured(`the TURN server refused to relay to its own relayed address: ${describe(reply)}`);
  }

  /** Sends one datagram; `failed` hears of it when the system would not (its callback's error). */
  send(peer: Address, data: Buffer, failed: (code: string) => void): void {
    const id = newTransactionId();
    this.#socket.send(encode(TYPE.sendIndication, id, [[ATTR.xorPeerAddress, xorAddress(peer, id)], [ATTR.data, data]]), this.#target.port, this.#target.address, (err) => {
      if (err !== null) failed((err as NodeJS.ErrnoException).code ?? err.message);
    });
  }

  /** Gives the allocation back (a Refresh with LIFETIME 0, RFC 8656 §7): best effort. */
  async release(timeoutMs: number): Promise<void> {
    await this.#request(TYPE.refreshRequest, [[ATTR.lifetime, Buffer.from([0, 0, 0, 0])]], timeoutMs, true).catch(() => undefined);
  }
}

function describe(reply: Message): string {
  const error = errorOf(reply);
  return error === undefined ? `message type 0x${reply.type.toString(16)}` : `${String(error.code)} ${error.reason}`;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Measures loss through the first `turn:` URI of `credentials`, its socket bound as `binding`
 * says (`--source`: from that address; `-4` / `-6`: the server's address of that family);
 * throws LossNotMeasured saying why it could not.
 */
export async function measureLoss(credentials: TurnCredentials, plan: LossPlan = LIBRARY_LOSS_PLAN, binding: Binding = {}): Promise<LossResult> {
  const uri = credentials.urls[0];
  if (uri === undefined) throw new LossNotMeasured('the deployment named no TURN server');
  const target = turnTarget(uri);
  let resolved: { address: string; family: number };
  try {
    resolved = await lookup(target.host, binding.family === undefined ? {} : { family: binding.family });
  } catch {
    throw new LossNotMeasured(`the TURN server's name ${target.host} does not resolve here${binding.family === undefined ? '' : ` to an IPv${String(binding.family)} address`}`);
  }
  if (binding.family !== undefined && resolved.family !== binding.family) throw new LossNotMeasured(`the TURN server ${target.host} is an IPv${String(resolved.family)} address, and this test runs over IPv${String(binding.family)}`);
  const socket = createSocket(resolved.family === 6 ? 'udp6' : 'udp4');
  socket.on('error', () => undefined);
  // Bound first, so the kernel's drop count for its port can be read before and after.
  socket.bind({ port: 0, ...(binding.localAddress === undefined ? {} : { address: binding.localAddress }) });
  await once(socket, 'listening');
  const session = new TurnSession(socket, { address: resolved.address, port: target.port }, credentials);
  const received = new Set<number>();
  session.onData = (data) => {
    if (data.length >= 8 && data.readUInt32BE(0) === TAG) received.add(data.readUInt32BE(4));
  };
  try {
    const relayed = await session.allocate(plan.requestTimeoutMs);
    await session.permit(relayed, plan.requestTimeoutMs);
    const notSent: Record<string, number> = {};
    const failed = (code: string) => {
      notSent[code] = (notSent[code] ?? 0) + 1;
    };
    const port = socket.address().port;
    const dropsBefore = await socketDrops(port);
    for (let sent = 0; sent < plan.datagrams; ) {
      for (let i = 0; i < plan.batchSize && sent < plan.datagrams; i++, sent++) {
        const data = Buffer.alloc(8);
        data.writeUInt32BE(TAG, 0);
        data.writeUInt32BE(sent, 4);
        session.send(relayed, data, failed);
      }
      await sleep(plan.batchEveryMs);
    }
    const waitUntil = performance.now() + plan.waitMs;
    while (received.size < plan.datagrams && performance.now() < waitUntil) await sleep(20);
    const dropsAfter = await socketDrops(port);
    await session.release(1000);
    const count = [...received].filter((n) => n < plan.datagrams).length;
    const droppedHere = dropsBefore === undefined || dropsAfter === undefined ? undefined : dropsAfter - dropsBefore;
    return { server: uri, sent: plan.datagrams, received: count, lossPercent: (100 * (plan.datagrams - count)) / plan.datagrams, notSent, droppedHere };
  } finally {
    socket.close();
  }
}
