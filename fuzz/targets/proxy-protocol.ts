// Fuzz target: the PROXY protocol header a trusted L4 proxy writes before the connection's own
// bytes (src/runtime/node/adapter/proxy-protocol.ts; haproxy's proxy-protocol.txt, "the spec" below).
// parseProxyHeader returns a verdict and never throws: `ok` with the header's length and what it
// says, `incomplete` (wait for more bytes) or `invalid` (close the connection).
import ipaddr from 'ipaddr.js';
import { parseAddress } from '../../src/core/net/address.js';
import { parseProxyHeader } from '../../src/runtime/node/adapter/proxy-protocol.js';
import { check, json, total } from '../invariant.js';

/** The spec's §2.2 signature that opens a v2 header. */
const V2_SIGNATURE = Buffer.from('0d0a0d0a000d0a515549540a', 'hex');
/** Spec §2.1: a v1 line, CRLF included, is at most 107 bytes, so a receiver need read no further. */
const V1_MAX = 107;
/** The parser's own bound on a v2 header (the spec allows 16 + 65535; it takes 2 KiB). */
const V2_MAX = 2048;
const HTTP_PROTOCOLS = new Set([null, 'HTTP/2', 'HTTP/1.1', 'HTTP/1.0', 'HTTP/3']);
/** What `tls_version` may say (docs/api.md, "/v1/ip"): OpenSSL's names, nothing a proxy makes up. */
const TLS_VERSIONS = /^(?:SSLv3|TLSv1(?:\.[1-3])?)$/;

type Verdict = ReturnType<typeof parseProxyHeader>;

const parse = (data: Buffer): Verdict => total('proxy/never-throws', () => parseProxyHeader(data));

const isV2 = (data: Buffer) => data.length >= 12 && data.subarray(0, 12).equals(V2_SIGNATURE);

/**
 * The client address the header itself names, read by ipaddr.js (IPv4-mapped IPv6 as the IPv4
 * address, docs/api.md "/v1/ip"): v1's third field (§2.1), v2's first address for AF_INET and
 * AF_INET6 (§2.2); undefined for v1 UNKNOWN and v2 LOCAL or AF_UNSPEC.
 */
function sourceInHeader(data: Buffer): string | undefined {
  if (!isV2(data)) {
    const [, protocol, address = ''] = data.toString('latin1', 0, data.indexOf('\r\n')).split(' ');
    return protocol === 'UNKNOWN' || !ipaddr.isValid(address) ? undefined : canonical(ipaddr.process(address));
  }
  const family = (data[13] ?? 0) >> 4;
  if (((data[12] ?? 0) & 0x0f) === 0 || family === 0) return undefined;
  if (family === 1) return data.subarray(16, 20).join('.');
  return canonical(ipaddr.process(ipaddr.fromByteArray([...data.subarray(16, 32)]).toString()));
}

const canonical = (address: ipaddr.IPv4 | ipaddr.IPv6): string => (address.kind() === 'ipv4' ? address.toString() : (address as ipaddr.IPv6).toRFC5952String());

/** What an `ok` verdict claims holds of the bytes: the header's extent and its facts. */
function checkOk(data: Buffer, verdict: Extract<Verdict, { status: 'ok' }>): void {
  const { length, facts } = verdict;
  const where = () => `${json(verdict)} for ${JSON.stringify(data.subarray(0, 128).toString('latin1'))}`;
  check(Number.isInteger(length) && length > 0 && length <= data.length, 'proxy/ok-in-bounds', () => `length outside the data: ${where()}`);
  if (isV2(data)) {
    // Spec §2.2: the version nibble is 2 and the 16-bit length counts the bytes after the 16-byte header.
    check(length === 16 + data.readUInt16BE(14) && length <= V2_MAX && (data[12] ?? 0) >> 4 === 2, 'proxy/ok-in-bounds', () => `not the v2 header's own length: ${where()}`);
  } else {
    // Spec §2.1: "PROXY " up to the first CRLF, which ends the line, and at most 107 bytes.
    const end = data.indexOf('\r\n');
    check(data.toString('latin1', 0, 6) === 'PROXY ' && end === length - 2, 'proxy/ok-in-bounds', () => `not the v1 line up to its first CRLF: ${where()}`);
    check(length <= V1_MAX, 'proxy/v1-at-most-107-bytes', () => `a v1 line of ${String(length)} bytes was accepted: ${where()}`);
    check(facts === undefined || (facts.httpProtocol === null && facts.tlsVersion === null), 'proxy/ok-in-bounds', () => `v1 has no TLVs: ${where()}`);
  }
  if (facts === undefined) return;
  const source = facts.sourceAddress;
  check(source === undefined || parseAddress(source)?.text === source, 'proxy/facts-in-bounds', () => `source is no canonical address: ${where()}`);
  check(source === sourceInHeader(data), 'proxy/source-is-the-headers', () => `the header names ${String(sourceInHeader(data))}: ${where()}`);
  check(HTTP_PROTOCOLS.has(facts.httpProtocol), 'proxy/facts-in-bounds', () => `http protocol: ${where()}`);
  check(facts.tlsVersion === null || TLS_VERSIONS.test(facts.tlsVersion), 'proxy/facts-in-bounds', () => `tls version: ${where()}`);
}

/**
 * The listener (acceptProxyProtocol) parses what has arrived so far, chunk by chunk, so a verdict
 * must not depend on where the bytes were split: every proper prefix of an accepted header is
 * `incomplete`, the header alone gets the same verdict as with the connection's bytes after it,
 * and more bytes never turn `invalid` into anything else.
 */
function checkChunking(data: Buffer, verdict: Verdict): void {
  const same = (a: Verdict, b: Verdict) => json(a) === json(b);
  if (verdict.status === 'ok') {
    const { length } = verdict;
    check(same(parse(data.subarray(0, length)), verdict), 'proxy/verdict-independent-of-chunking', () => `the header alone reads otherwise: ${json(parse(data.subarray(0, length)))} vs ${json(verdict)}`);
    // Every cut inside the v2 signature and fixed header, and a few later: halfway, and one and two bytes short.
    const cuts = new Set([...Array.from({ length: 16 }, (_, i) => i + 1), length >> 1, length - 2, length - 1]);
    for (const cut of cuts) {
      if (cut <= 0 || cut >= length) continue;
      const early = parse(data.subarray(0, cut));
      check(early.status === 'incomplete', 'proxy/verdict-independent-of-chunking', () => `the first ${String(cut)} of ${String(length)} header bytes are ${json(early)}`);
    }
  } else if (verdict.status === 'invalid') {
    check(typeof verdict.reason === 'string' && verdict.reason !== '', 'proxy/invalid-says-why', () => json(verdict));
    const more = parse(Buffer.concat([data, Buffer.from(' 1 2\r\n\0\0\0\0')]));
    // The one way this is known to happen is a v1 line past 107 bytes; named as such.
    if (more.status === 'ok' && !isV2(data)) check(more.length <= V1_MAX, 'proxy/v1-at-most-107-bytes', () => `refused at ${String(data.length)} bytes without CRLF, accepted as ${json(more)} once the CRLF came`);
    check(more.status === 'invalid', 'proxy/verdict-independent-of-chunking', () => `refused, then ${json(more)} once more bytes came: ${JSON.stringify(data.subarray(0, 128).toString('latin1'))}`);
  } else {
    // Waiting is bounded: past either version's limit the parser must have decided.
    const limit = isV2(data) || V2_SIGNATURE.subarray(0, data.length).equals(data.subarray(0, 12)) ? V2_MAX : V1_MAX;
    check(data.length < limit, 'proxy/incomplete-is-bounded', () => `still incomplete after ${String(data.length)} bytes`);
  }
}

export function fuzz(data: Buffer): void {
  const verdict = parse(data);
  check(['ok', 'incomplete', 'invalid'].includes(verdict.status), 'proxy/never-throws', () => json(verdict));
  if (verdict.status === 'ok') checkOk(data, verdict);
  checkChunking(data, verdict);
}
