// A raw HTTP/2 client over TLS for faults Node's own client will not commit: opening more
// streams than the server allows, or dripping CONTINUATION frames. Frames per RFC 9113 §4.1,
// header blocks in HPACK (RFC 7541) literals without Huffman coding.
import { connect, type TLSSocket } from 'node:tls';

export const FRAME = { DATA: 0x0, HEADERS: 0x1, RST_STREAM: 0x3, SETTINGS: 0x4, PING: 0x6, GOAWAY: 0x7, CONTINUATION: 0x9 } as const;
export const FLAG = { END_STREAM: 0x1, END_HEADERS: 0x4 } as const;
const PREFACE = 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n';

export interface Frame {
  type: number;
  flags: number;
  stream: number;
  payload: Buffer;
}

export function frame(type: number, flags: number, stream: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head[3] = type;
  head[4] = flags;
  head.writeUInt32BE(stream & 0x7fffffff, 5);
  return Buffer.concat([head, payload]);
}

/** An HPACK string literal, no Huffman (RFC 7541 §5.2); short strings only. */
function literal(text: string): Buffer {
  const bytes = Buffer.from(text, 'latin1');
  if (bytes.length > 126) throw new Error('literal too long for this helper');
  return Buffer.concat([Buffer.from([bytes.length]), bytes]);
}

/** Literal header field without indexing, with the name from the static table (RFC 7541 §6.2.2). */
function indexedName(index: number, value: string): Buffer {
  const prefix = index < 15 ? Buffer.from([index]) : Buffer.from([0x0f, index - 15]);
  return Buffer.concat([prefix, literal(value)]);
}

/** Literal header field without indexing and a new name. */
export function header(name: string, value: string): Buffer {
  return Buffer.concat([Buffer.from([0x00]), literal(name), literal(value)]);
}

/** A request's header block: static-table entries 2/3 (:method GET/POST), 7 (:scheme https). */
export function requestBlock(method: 'GET' | 'POST', path: string, extra: Buffer[] = []): Buffer {
  return Buffer.concat([Buffer.from([method === 'GET' ? 0x82 : 0x83, 0x87]), indexedName(4, path), indexedName(1, 'localhost'), ...extra]);
}

export interface RawH2 {
  socket: TLSSocket;
  frames: Frame[];
  send(bytes: Buffer): void;
  closed: Promise<void>;
}

/** Opens TLS with ALPN h2, sends the preface and an empty SETTINGS, and parses what comes back. */
export async function rawH2(port: number): Promise<RawH2> {
  const socket = connect({ port, host: '127.0.0.1', ALPNProtocols: ['h2'], rejectUnauthorized: false });
  await new Promise<void>((resolve, reject) => {
    socket.once('secureConnect', resolve);
    socket.once('error', reject);
  });
  if (socket.alpnProtocol !== 'h2') throw new Error(`ALPN chose ${String(socket.alpnProtocol)}`);
  const frames: Frame[] = [];
  let buffered = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    while (buffered.length >= 9) {
      const length = buffered.readUIntBE(0, 3);
      if (buffered.length < 9 + length) break;
      frames.push({ type: buffered[3] ?? 0, flags: buffered[4] ?? 0, stream: buffered.readUInt32BE(5) & 0x7fffffff, payload: buffered.subarray(9, 9 + length) });
      buffered = buffered.subarray(9 + length);
    }
  });
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => { resolve(); }));
  socket.write(Buffer.concat([Buffer.from(PREFACE, 'latin1'), frame(FRAME.SETTINGS, 0, 0)]));
  return { socket, frames, send: (bytes) => socket.write(bytes), closed };
}

/** The server's SETTINGS parameters, by identifier (RFC 9113 §6.5.2). */
export function settingsOf(frames: Frame[]): Map<number, number> {
  const settings = new Map<number, number>();
  for (const f of frames) {
    if (f.type !== FRAME.SETTINGS || (f.flags & 0x1) !== 0) continue;
    for (let at = 0; at + 6 <= f.payload.length; at += 6) settings.set(f.payload.readUInt16BE(at), f.payload.readUInt32BE(at + 2));
  }
  return settings;
}
