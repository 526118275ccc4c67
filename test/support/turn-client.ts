// A TURN client for what turnutils_uclient cannot be asked to do: hold an allocation open, refresh
// it with a chosen lifetime after its credential expired, flood its own relayed address and count
// what comes back. Built on the command line's STUN codec (src/cli/speedtest/turn/stun.ts), one UDP socket
// (one allocation) per session.
import { createSocket, type Socket } from 'node:dgram';
import { once } from 'node:events';
import { ATTR, TYPE, decode, encode, errorOf, longTermKey, newTransactionId, readXorAddress, xorAddress, type Address, type Message } from '../../src/cli/speedtest/turn/stun.js';

export interface Answer {
  /** `ok`, or the error's code and reason (`486 Allocation Quota Reached`). */
  result: string;
  /** The LIFETIME granted, where the answer has one. */
  lifetime: number | undefined;
}

function lifetimeAttribute(seconds: number): [number, Buffer] {
  const value = Buffer.alloc(4);
  value.writeUInt32BE(seconds);
  return [ATTR.lifetime, value];
}

export class TurnTestSession {
  readonly #socket: Socket;
  #realm = '';
  #nonce = '';
  #key: Buffer | undefined;
  /** 438 Stale Nonce answers taken so far. */
  staleNonces = 0;
  /** Payload bytes of the Data indications received so far. */
  dataBytes = 0;
  #relayed: Address | undefined;

  private constructor(socket: Socket, readonly server: Address, readonly username: string, readonly credential: string) {
    this.#socket = socket;
    socket.on('message', (packet: Buffer) => {
      const message = decode(packet);
      if (message?.type === TYPE.dataIndication) this.dataBytes += message.attributes.get(ATTR.data)?.length ?? 0;
    });
  }

  static async open(server: Address, credentials: { username: string; credential: string }): Promise<TurnTestSession> {
    const socket = createSocket('udp4');
    socket.bind(0, '127.0.0.1');
    await once(socket, 'listening');
    return new TurnTestSession(socket, server, credentials.username, credentials.credential);
  }

  #request(type: number, attributes: [number, Buffer][]): Promise<Message> {
    const id = newTransactionId();
    const auth: [number, Buffer][] =
      this.#key === undefined ? [] : [[ATTR.username, Buffer.from(this.username)], [ATTR.realm, Buffer.from(this.#realm)], [ATTR.nonce, Buffer.from(this.#nonce)]];
    const packet = encode(type, id, [...attributes, ...auth], this.#key);
    return new Promise((resolve, reject) => {
      const onMessage = (reply: Buffer) => {
        const message = decode(reply);
        if (message === undefined || !message.transactionId.equals(id)) return;
        clearInterval(resend);
        clearTimeout(deadline);
        this.#socket.off('message', onMessage);
        resolve(message);
      };
      this.#socket.on('message', onMessage);
      const send = () => {
        this.#socket.send(packet, this.server.port, this.server.address);
      };
      const resend = setInterval(send, 500);
      const deadline = setTimeout(() => {
        clearInterval(resend);
        this.#socket.off('message', onMessage);
        reject(new Error('the TURN server did not answer'));
      }, 3000);
      send();
    });
  }

  /** A request with the long-term mechanism: the 401's realm and nonce taken, a 438's nonce too. */
  async #authenticated(type: number, attributes: [number, Buffer][]): Promise<Message> {
    let reply = await this.#request(type, attributes);
    for (let attempt = 0; attempt < 2; attempt++) {
      const error = errorOf(reply);
      if (error === undefined || (error.code !== 401 && error.code !== 438)) break;
      if (error.code === 401 && this.#key !== undefined) break;
      if (error.code === 438) this.staleNonces += 1;
      this.#realm = reply.attributes.get(ATTR.realm)?.toString('utf8') ?? '';
      this.#nonce = reply.attributes.get(ATTR.nonce)?.toString('utf8') ?? '';
      this.#key = longTermKey(this.username, this.#realm, this.credential);
      reply = await this.#request(type, attributes);
    }
    return reply;
  }

  #answer(reply: Message): Answer {
    const error = errorOf(reply);
    return { result: error === undefined ? 'ok' : `${String(error.code)} ${error.reason}`, lifetime: reply.attributes.get(ATTR.lifetime)?.readUInt32BE(0) };
  }

  /** Allocate a UDP relay (REQUESTED-TRANSPORT 17), asking for `lifetime` seconds if given. */
  async allocate(lifetime?: number): Promise<Answer> {
    const attributes: [number, Buffer][] = [[ATTR.requestedTransport, Buffer.from([17, 0, 0, 0])]];
    if (lifetime !== undefined) attributes.push(lifetimeAttribute(lifetime));
    const reply = await this.#authenticated(TYPE.allocateRequest, attributes);
    const relayed = reply.attributes.get(ATTR.xorRelayedAddress);
    if (relayed !== undefined) this.#relayed = readXorAddress(relayed, reply.transactionId);
    return this.#answer(reply);
  }

  /** The relayed address of the allocation. */
  get relayed(): Address {
    if (this.#relayed === undefined) throw new Error('no allocation was made');
    return this.#relayed;
  }

  async refresh(lifetime: number): Promise<Answer> {
    return this.#answer(await this.#authenticated(TYPE.refreshRequest, [lifetimeAttribute(lifetime)]));
  }

  async permit(peer: Address): Promise<Answer> {
    return this.#answer(await this.#authenticated(TYPE.createPermissionRequest, [[ATTR.xorPeerAddress, xorAddress(peer, newTransactionId())]]));
  }

  /** One Send indication (RFC 8656 §11) of `data` to the peer. */
  send(peer: Address, data: Buffer): void {
    const id = newTransactionId();
    this.#socket.send(encode(TYPE.sendIndication, id, [[ATTR.xorPeerAddress, xorAddress(peer, id)], [ATTR.data, data]]), this.server.port, this.server.address);
  }

  /** Closes the socket; the allocation stays until its lifetime ends, as an abandoned one does. */
  close(): void {
    this.#socket.close();
  }
}
