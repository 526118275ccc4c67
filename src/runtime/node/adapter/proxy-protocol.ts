import type { Server, Socket } from 'node:net';
import { parseAddress } from '../../../core/net/address.js';
import type { TrustPolicy } from '../../../core/net/trust.js';

/** What a PROXY protocol header told us about the client connection behind the proxy. */
interface ProxiedFacts {
  /** The client's address; undefined when the header names none (v1 UNKNOWN, v2 LOCAL or UNSPEC). */
  sourceAddress: string | undefined;
  /** From the ALPN TLV (v2 only); null when the proxy did not say or named no HTTP protocol. */
  httpProtocol: string | null;
  /** From the SSL TLV's version sub-TLV (v2 only); null when the proxy did not say or named no TLS version. */
  tlsVersion: string | null;
}

const NO_CLIENT: ProxiedFacts = Object.freeze({ sourceAddress: undefined, httpProtocol: null, tlsVersion: null });

export const PROXIED = Symbol('netdiag.proxied');
export type ProxiedSocket = Socket & { [PROXIED]?: ProxiedFacts };

type Parsed = { status: 'incomplete' } | { status: 'invalid'; reason: string } | { status: 'ok'; length: number; facts: ProxiedFacts | undefined };

const V2_SIGNATURE = Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a]);
/** v1 headers are at most 107 bytes (the PROXY protocol specification, §2.1); v2 at most 16 + 65535, but we accept 2 KiB. */
const V1_MAX = 107;
const V2_MAX = 2048;

/**
 * ALPN protocol IDs (the IANA registry, RFC 7301 §6) mapped to what `http_protocol` says. A Map,
 * not an object literal: an ID such as `__proto__` or `toString` must find nothing, not an
 * inherited property that would then reach the answer.
 */
const ALPN = new Map([
  ['h2', 'HTTP/2'],
  ['http/1.1', 'HTTP/1.1'],
  ['http/1.0', 'HTTP/1.0'],
  ['h3', 'HTTP/3'],
]);

/**
 * The SSL TLV's version is the proxy's TLS library's name for it (HAProxy passes OpenSSL's
 * `SSL_get_version()`: `SSLv3`, `TLSv1`, `TLSv1.1`, `TLSv1.2`, `TLSv1.3`), which is what
 * `tls_version` reports (docs/api.md, "/v1/ip"; at most 24 characters by the spec). Anything else
 * a proxy writes there is not reported (null), so no text of its choosing reaches the answer.
 */
const TLS_VERSION = /^(?:SSLv3|TLSv1(?:\.[1-3])?)$/;

/**
 * A v1 address as its protocol names it (proxy-protocol.txt §2.1: TCP4 a dotted quad, TCP6 IPv6
 * text), so a line whose address is of another family is refused. HAProxy on a dual-stack bind
 * (`bind :::443 v4v6`) writes every IPv4 client as `TCP6 ::ffff:a.b.c.d`: that is IPv6 text, and
 * the caller is the IPv4 address it maps (docs/api.md, "/v1/ip"), so it is accepted as such.
 */
function v1Address(protocol: 'TCP4' | 'TCP6', text: string): string | undefined {
  // A zone index names an interface of the proxy's host, never a client: no proxy writes one.
  if (text.includes('%')) return undefined;
  // parseAddress takes IPv4 only as a dotted quad, so text without a colon is IPv4 text.
  const ipv6Text = text.includes(':');
  if (protocol === 'TCP4' ? ipv6Text : !ipv6Text) return undefined;
  return parseAddress(text)?.text;
}

function parseV1(data: Buffer): Parsed {
  // Looked for only within the 107 bytes a line may take, CRLF included: a longer line is refused
  // however it arrives, whole or in pieces (found by fuzzing: fuzz/targets/proxy-protocol.ts).
  const end = data.subarray(0, V1_MAX).indexOf('\r\n');
  if (end === -1) return data.length >= V1_MAX ? { status: 'invalid', reason: 'v1 header too long' } : { status: 'incomplete' };
  const parts = data.toString('latin1', 0, end).split(' ');
  // UNKNOWN: the proxy does not know the client (a UNIX socket, a health check); the rest of
  // the line is to be ignored (§2.1). The connection then has no caller (see acceptProxyProtocol).
  if (parts[1] === 'UNKNOWN') return { status: 'ok', length: end + 2, facts: undefined };
  const protocol = parts[1];
  if (parts.length !== 6 || (protocol !== 'TCP4' && protocol !== 'TCP6')) return { status: 'invalid', reason: 'malformed v1 header' };
  const source = v1Address(protocol, parts[2] ?? '');
  if (source === undefined) return { status: 'invalid', reason: 'bad v1 source address' };
  return { status: 'ok', length: end + 2, facts: { sourceAddress: source, httpProtocol: null, tlsVersion: null } };
}

/** Calls `visit` for each type-length-value record in `data[from, to)` (proxy-protocol.txt §2.2.7). */
function eachTlv(data: Buffer, from: number, to: number, visit: (type: number, value: Buffer) => void): void {
  for (let at = from; at + 3 <= to; ) {
    const length = data.readUInt16BE(at + 1);
    visit(data[at] ?? 0, data.subarray(at + 3, Math.min(at + 3 + length, to)));
    at += 3 + length;
  }
}

const PP2_TYPE_ALPN = 0x01;
const PP2_TYPE_SSL = 0x20;
const PP2_SUBTYPE_SSL_VERSION = 0x21;
const PP2_CLIENT_SSL = 0x01;

function tlvs(data: Buffer, from: number, to: number): { alpn?: string; tls?: string } {
  const found: { alpn?: string; tls?: string } = {};
  eachTlv(data, from, to, (type, value) => {
    if (type === PP2_TYPE_ALPN) found.alpn = value.toString('latin1');
    // PP2_TYPE_SSL: client flags (1 byte), verify result (4), then sub-TLVs; the version is one of them.
    if (type === PP2_TYPE_SSL && value.length >= 5 && ((value[0] ?? 0) & PP2_CLIENT_SSL) !== 0) {
      eachTlv(value, 5, value.length, (subtype, subvalue) => {
        if (subtype === PP2_SUBTYPE_SSL_VERSION) found.tls = subvalue.toString('latin1');
      });
    }
  });
  return found;
}

function parseV2(data: Buffer): Parsed {
  if (data.length < 16) return { status: 'incomplete' };
  const versionCommand = data[12] ?? 0;
  if (versionCommand >> 4 !== 2) return { status: 'invalid', reason: 'unsupported v2 version' };
  const length = 16 + data.readUInt16BE(14);
  if (length > V2_MAX) return { status: 'invalid', reason: 'v2 header too long' };
  if (data.length < length) return { status: 'incomplete' };
  const command = versionCommand & 0x0f;
  if (command === 0x0) return { status: 'ok', length, facts: undefined }; // LOCAL: the proxy itself
  if (command !== 0x1) return { status: 'invalid', reason: 'unknown v2 command' };
  const family = (data[13] ?? 0) >> 4;
  let source: string | undefined;
  let addressEnd = 16;
  if (family === 0x1 && length >= 16 + 12) {
    source = [...data.subarray(16, 20)].join('.');
    addressEnd = 16 + 12;
  } else if (family === 0x2 && length >= 16 + 36) {
    const words: string[] = [];
    for (let i = 0; i < 16; i += 2) words.push(data.readUInt16BE(16 + i).toString(16));
    // An IPv4-mapped source (HAProxy writes one for an IPv4 client when the addresses' families
    // differ, as on a dual-stack bind) is the IPv4 caller: parseAddress maps it.
    // One that is no address a client connects from (IPv4-compatible) is refused, as in v1.
    source = parseAddress(words.join(':'))?.text;
    if (source === undefined) return { status: 'invalid', reason: 'bad v2 source address' };
    addressEnd = 16 + 36;
  } else if (family !== 0x0) {
    return { status: 'invalid', reason: 'unsupported v2 address family' };
  }
  const found = tlvs(data, addressEnd, length);
  return {
    status: 'ok',
    length,
    facts: {
      sourceAddress: source,
      httpProtocol: found.alpn === undefined ? null : (ALPN.get(found.alpn) ?? null),
      tlsVersion: found.tls !== undefined && TLS_VERSION.test(found.tls) ? found.tls : null,
    },
  };
}

/** Parses a PROXY protocol v1 or v2 header at the start of `data` (haproxy's proxy-protocol.txt). */
export function parseProxyHeader(data: Buffer): Parsed {
  if (data.length >= 12 ? data.subarray(0, 12).equals(V2_SIGNATURE) : V2_SIGNATURE.subarray(0, data.length).equals(data)) {
    return data.length < 12 ? { status: 'incomplete' } : parseV2(data);
  }
  if (data.length < 6) return 'PROXY '.startsWith(data.toString('latin1')) ? { status: 'incomplete' } : { status: 'invalid', reason: 'no PROXY header' };
  if (data.toString('latin1', 0, 6) !== 'PROXY ') return { status: 'invalid', reason: 'no PROXY header' };
  return parseV1(data);
}

/**
 * Makes a listening server expect a PROXY header on connections from trusted peers: the header
 * is read, checked and removed before the server's own connection handling (HTTP, or TLS then
 * HTTP) sees the bytes; any other peer's connection goes through untouched, so it can never
 * claim another address. Because the server listens itself, Node's connection tracking, header
 * and request deadlines, `close()` and the drain work as on a plain listener. A trusted peer gets
 * `timeoutMs` for its header. Returns the connections still waiting for theirs, for a drain.
 */
export function acceptProxyProtocol(server: Server, trust: TrustPolicy, timeoutMs: number): Set<Socket> {
  const handlers = server.listeners('connection') as ((socket: Socket) => void)[];
  server.removeAllListeners('connection');
  const handOver = (socket: Socket) => {
    for (const handler of handlers) handler.call(server, socket);
  };
  const waiting = new Set<Socket>();
  server.on('connection', (socket: ProxiedSocket) => {
    const peer = socket.remoteAddress === undefined ? undefined : parseAddress(socket.remoteAddress);
    if (peer === undefined || !trust.trusts(peer)) {
      handOver(socket);
      return;
    }
    waiting.add(socket);
    let buffered = Buffer.alloc(0);
    const timer = setTimeout(() => socket.destroy(), timeoutMs);
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const parsed = parseProxyHeader(buffered);
      if (parsed.status === 'incomplete') return;
      done();
      if (parsed.status === 'invalid') {
        socket.destroy();
        return;
      }
      socket.pause();
      // A header that names no client (v1 UNKNOWN, v2 LOCAL or the unspecified family) leaves
      // the connection without a caller. Never the proxy's own address: the caller rule would
      // then find a trusted peer and read a forwarding header that, behind an L4 proxy, only the
      // client writes.
      socket[PROXIED] = parsed.facts ?? NO_CLIENT;
      const rest = buffered.subarray(parsed.length);
      if (rest.length > 0) socket.unshift(rest);
      handOver(socket);
      socket.resume();
    };
    const onError = () => socket.destroy();
    const done = () => {
      clearTimeout(timer);
      waiting.delete(socket);
      socket.off('data', onData);
      socket.off('error', onError);
    };
    socket.on('data', onData);
    socket.on('error', onError);
    socket.once('close', done);
  });
  return waiting;
}
