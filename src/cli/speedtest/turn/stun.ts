// The part of STUN (RFC 8489) and TURN (RFC 8656) the command line's packet-loss test speaks: a
// message's header and attributes, XOR'd addresses, and MESSAGE-INTEGRITY with long-term
// credentials. Encoding and decoding only; the exchange is in loss.ts.
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { isIPv4 } from 'node:net';

/** RFC 8489 §5: the fixed cookie that tells STUN from other traffic on the port. */
const MAGIC_COOKIE = 0x2112a442;
const HEADER_BYTES = 20;

/** Message types (method and class): RFC 8656 §17, RFC 8489 §6. */
export const TYPE = {
  allocateRequest: 0x0003,
  allocateSuccess: 0x0103,
  allocateError: 0x0113,
  refreshRequest: 0x0004,
  refreshSuccess: 0x0104,
  refreshError: 0x0114,
  createPermissionRequest: 0x0008,
  createPermissionSuccess: 0x0108,
  createPermissionError: 0x0118,
  sendIndication: 0x0016,
  dataIndication: 0x0017,
} as const;

/** Attribute types: RFC 8489 §18.3, RFC 8656 §18. */
export const ATTR = {
  username: 0x0006,
  messageIntegrity: 0x0008,
  errorCode: 0x0009,
  lifetime: 0x000d,
  xorPeerAddress: 0x0012,
  data: 0x0013,
  realm: 0x0014,
  nonce: 0x0015,
  xorRelayedAddress: 0x0016,
  requestedTransport: 0x0019,
  xorMappedAddress: 0x0020,
} as const;

export interface Address {
  address: string;
  port: number;
}

export interface Message {
  type: number;
  transactionId: Buffer;
  attributes: Map<number, Buffer>;
}

/** RFC 8489 §5: 96 bits, uniformly and randomly chosen. */
export function newTransactionId(): Buffer {
  return randomBytes(12);
}

function attribute(type: number, value: Buffer): Buffer {
  const padded = Buffer.alloc(4 + Math.ceil(value.length / 4) * 4);
  padded.writeUInt16BE(type, 0);
  padded.writeUInt16BE(value.length, 2);
  value.copy(padded, 4);
  return padded;
}

/** An address XOR'd with the cookie (and, for IPv6, the transaction id): RFC 8489 §14.2. */
export function xorAddress(target: Address, transactionId: Buffer): Buffer {
  const v4 = isIPv4(target.address);
  const value = Buffer.alloc(v4 ? 8 : 20);
  value.writeUInt8(v4 ? 0x01 : 0x02, 1);
  value.writeUInt16BE(target.port ^ (MAGIC_COOKIE >>> 16), 2);
  const raw = v4 ? Buffer.from(target.address.split('.').map(Number)) : ipv6Bytes(target.address);
  const mask = Buffer.concat([u32(MAGIC_COOKIE), transactionId]);
  for (let i = 0; i < raw.length; i++) value[4 + i] = (raw[i] ?? 0) ^ (mask[i] ?? 0);
  return value;
}

export function readXorAddress(value: Buffer, transactionId: Buffer): Address {
  const family = value.readUInt8(1);
  const port = value.readUInt16BE(2) ^ (MAGIC_COOKIE >>> 16);
  const mask = Buffer.concat([u32(MAGIC_COOKIE), transactionId]);
  const length = family === 0x01 ? 4 : 16;
  const raw = Buffer.alloc(length);
  for (let i = 0; i < length; i++) raw[i] = (value[4 + i] ?? 0) ^ (mask[i] ?? 0);
  if (family === 0x01) return { address: [...raw].join('.'), port };
  const words: string[] = [];
  for (let i = 0; i < 16; i += 2) words.push(raw.readUInt16BE(i).toString(16));
  return { address: words.join(':'), port };
}

function ipv6Bytes(text: string): Buffer {
  const [head = '', tail = ''] = text.split('::');
  const part = (s: string) => (s === '' ? [] : s.split(':'));
  const left = part(head);
  const right = part(tail);
  const words = [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  const out = Buffer.alloc(16);
  words.forEach((w, i) => out.writeUInt16BE(parseInt(w, 16), i * 2));
  return out;
}

function u32(value: number): Buffer {
  const out = Buffer.alloc(4);
  out.writeUInt32BE(value >>> 0, 0);
  return out;
}

/** RFC 8489 §9.2.2: the long-term key, MD5(username ":" realm ":" password). */
export function longTermKey(username: string, realm: string, password: string): Buffer {
  return createHash('md5').update(`${username}:${realm}:${password}`).digest();
}

/**
 * A message with its attributes, and MESSAGE-INTEGRITY when a key is given: HMAC-SHA1 over the
 * message up to that attribute, with the header's length already counting it (RFC 8489 §14.5).
 */
export function encode(type: number, transactionId: Buffer, attributes: [number, Buffer][], key?: Buffer): Buffer {
  const body = Buffer.concat(attributes.map(([t, v]) => attribute(t, v)));
  const header = Buffer.alloc(HEADER_BYTES);
  header.writeUInt16BE(type, 0);
  header.writeUInt32BE(MAGIC_COOKIE, 4);
  transactionId.copy(header, 8);
  if (key === undefined) {
    header.writeUInt16BE(body.length, 2);
    return Buffer.concat([header, body]);
  }
  header.writeUInt16BE(body.length + 24, 2);
  const mac = createHmac('sha1', key).update(Buffer.concat([header, body])).digest();
  return Buffer.concat([header, body, attribute(ATTR.messageIntegrity, mac)]);
}

/** A STUN message, or undefined for anything else (too short, no cookie, attributes overrunning). */
export function decode(packet: Buffer): Message | undefined {
  if (packet.length < HEADER_BYTES || packet.readUInt32BE(4) !== MAGIC_COOKIE || (packet[0] ?? 0) >> 6 !== 0) return undefined;
  const length = packet.readUInt16BE(2);
  if (HEADER_BYTES + length > packet.length) return undefined;
  const attributes = new Map<number, Buffer>();
  let at = HEADER_BYTES;
  while (at + 4 <= HEADER_BYTES + length) {
    const type = packet.readUInt16BE(at);
    const size = packet.readUInt16BE(at + 2);
    if (at + 4 + size > HEADER_BYTES + length) return undefined;
    if (!attributes.has(type)) attributes.set(type, packet.subarray(at + 4, at + 4 + size));
    at += 4 + Math.ceil(size / 4) * 4;
  }
  return { type: packet.readUInt16BE(0), transactionId: packet.subarray(8, 20), attributes };
}

/** ERROR-CODE (RFC 8489 §14.8): the code and its reason phrase. */
export function errorOf(message: Message): { code: number; reason: string } | undefined {
  const value = message.attributes.get(ATTR.errorCode);
  if (value === undefined || value.length < 4) return undefined;
  return { code: (value.readUInt8(2) & 0x07) * 100 + value.readUInt8(3), reason: value.subarray(4).toString('utf8') };
}
