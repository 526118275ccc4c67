import dnsPacket from 'dns-packet';
import ipaddr from 'ipaddr.js';
import { presentedName } from './presentation.js';
import {
  MAX_ANSWERS,
  MAX_NAME_LENGTH,
  MAX_TTL,
  MAX_TXT_CHARACTERS,
  DNS_TYPES,
  RECORD_TYPES,
  type DnsAnswer,
  type DnsResult,
  type DnsType,
  type ResponseCode,
} from '../../common/dns-types.js';
import { DnsFailure } from '../../core/ports/dns-transport.js';

/**
 * EDNS(0) UDP payload size: 1232 bytes avoids IP fragmentation on any path (DNS Flag Day 2020);
 * a larger answer comes back truncated and is fetched again over TCP. No EDNS Client Subnet
 * option is ever sent (RFC 7871 §11.1 privacy): the upstream learns nothing about the caller.
 */
const EDNS_PAYLOAD = 1232;

/** IDs drawn from the CSPRNG in batches: one call per 4096 queries instead of one per query. */
const ids = new Uint16Array(4096);
let nextId = ids.length;

function randomId(): number {
  if (nextId === ids.length) {
    crypto.getRandomValues(ids);
    nextId = 0;
  }
  return ids[nextId++] ?? 0;
}

/** QTYPE values (RFC 1035 §3.2.2; AAAA RFC 3596 §2.1). */
const QTYPES = Object.fromEntries(DNS_TYPES.map((t) => [t, RECORD_TYPES[t].code])) as Record<DnsType, number>;
/** The OPT pseudo-record's TYPE (RFC 6891 §6.1.1). */
const OPT = 41;

/** A label's length octet: 1-63 (RFC 1035 §2.3.4); above that the octet would read as a pointer. */
function labelLength(length: number): number {
  if (length < 1 || length > 63) throw new DnsFailure('invalid', 'a query name with an empty or over-long label');
  return length;
}

/**
 * A query with a fresh random ID (RFC 5452 §4.3), recursion desired: the header, one question
 * and an EDNS(0) OPT record (RFC 1035 §4.1, RFC 6891 §6.1.2), the same bytes `dns-packet`
 * writes for it (wire.test.ts holds the two side by side). Written by hand because every
 * caller's PTR query goes through here: dns-packet's general encoder took about 3% of the CPU
 * of /v1/ip for distinct callers; replies are checked by dns-packet, their records read here. `name` is canonical
 * (names.ts: ASCII, no trailing dot, labels of 1-63 octets; '' is the root); anything else
 * is refused, never written wrong.
 */
export function encodeQuery(name: string, type: DnsType): Uint8Array {
  const nameBytes = name === '' ? 1 : name.length + 2;
  const query = new Uint8Array(12 + nameBytes + 4 + 11);
  const id = randomId();
  query[0] = id >> 8;
  query[1] = id & 0xff;
  query[2] = 0x01; // RD
  query[5] = 1; // QDCOUNT
  query[11] = 1; // ARCOUNT: the OPT record
  let at = 12;
  if (name !== '') {
    let lengthAt = at++;
    for (let i = 0; i < name.length; i++) {
      const c = name.charCodeAt(i);
      if (c > 0x7e || c < 0x21) throw new DnsFailure('invalid', 'a query name that is not canonical ASCII');
      if (c === 0x2e) {
        query[lengthAt] = labelLength(at - lengthAt - 1);
        lengthAt = at++;
      } else {
        query[at++] = c;
      }
    }
    query[lengthAt] = labelLength(at - lengthAt - 1);
  }
  query[at++] = 0; // the root label ends the name
  const qtype = QTYPES[type];
  query[at++] = qtype >> 8;
  query[at++] = qtype & 0xff;
  query[at++] = 0;
  query[at++] = 1; // QCLASS IN
  // OPT: root owner name, TYPE 41, CLASS the UDP payload size, TTL 0 (extended RCODE, version
  // 0, no DO bit), no options.
  at += 1;
  query[at++] = 0;
  query[at++] = OPT;
  query[at++] = EDNS_PAYLOAD >> 8;
  query[at] = EDNS_PAYLOAD & 0xff;
  return query;
}

/** The ID of a message: its first two octets (RFC 1035 §4.1.1). */
export function messageId(message: Uint8Array): number {
  return message.length < 2 ? -1 : ((message[0] ?? 0) << 8) | (message[1] ?? 0);
}

const RCODES: Record<number, ResponseCode> = { 0: 'no_error', 2: 'server_failure', 3: 'name_error', 5: 'refused' };

/**
 * The name at `offset` as responses give it (presentation.ts: lower case, no trailing dot, RFC
 * 1035 §5.1 escapes), within the contract's 253 characters, which count its escapes.
 */
function presentName(message: Uint8Array, offset: number): { text: string; end: number } {
  const name = presentedName(message, offset);
  if (name.text.length > MAX_NAME_LENGTH) throw new DnsFailure('too_large', `a name of ${name.text.length} characters`);
  return name;
}

/** A 16-bit field at `at` (network byte order). */
const u16 = (message: Uint8Array, at: number): number => ((message[at] ?? 0) << 8) | (message[at + 1] ?? 0);

function ttlOf(ttl: number | undefined): number {
  return Math.min(Math.max(0, ttl ?? 0), MAX_TTL);
}

const utf8 = new TextDecoder('utf-8');

/** TXT: character-strings concatenated, no quotes or separators, decoded as UTF-8 (docs/api.md). */
function txtValue(data: unknown): string {
  const parts = Array.isArray(data) ? (data as unknown[]) : [data];
  const bytes = parts.map((p) => (typeof p === 'string' ? new TextEncoder().encode(p) : (p as Uint8Array)));
  const joined = new Uint8Array(bytes.reduce((n, b) => n + b.length, 0));
  let offset = 0;
  for (const b of bytes) {
    joined.set(b, offset);
    offset += b.length;
  }
  const value = utf8.decode(joined);
  // JSON Schema's maxLength counts code points, so the bound does too.
  const characters = Array.from(value).length;
  if (characters > MAX_TXT_CHARACTERS) throw new DnsFailure('too_large', `a TXT value of ${characters} characters`);
  return value;
}

/** A 32-bit field at `at` (network byte order), unsigned. */
const u32 = (message: Uint8Array, at: number): number => u16(message, at) * 0x10000 + u16(message, at + 2);

/** Resource record TYPEs read here, by number: the query types (QTYPES) and SOA (RFC 1035 §3.3.13). */
const TYPE_NAMES: Readonly<Record<number, DnsType | 'SOA'>> = { ...Object.fromEntries(Object.entries(QTYPES).map(([name, code]) => [code, name])), 6: 'SOA' };

/**
 * One resource record as its own octets give it (RFC 1035 §4.1.3): owner, TYPE, TTL, and where
 * its RDATA starts and ends by RDLENGTH. Every field the service uses is read from here, never
 * from dns-packet's decoding of the data: dns-packet reads an A, AAAA, MX, CNAME, NS, PTR or SOA
 * record's data by its type, whatever RDLENGTH says, so a record whose RDLENGTH lies gave octets
 * from outside it (found by fuzzing: fuzz/targets/dns.ts).
 */
interface RawRecord {
  owner: string;
  type: number;
  ttl: number;
  rdata: number;
  end: number;
}

function recordAt(message: Uint8Array, at: number): RawRecord {
  const owner = presentName(message, at);
  if (owner.end + 10 > message.length) throw new DnsFailure('invalid', 'the message is cut off');
  const rdata = owner.end + 10;
  const end = rdata + u16(message, owner.end + 8);
  if (end > message.length) throw new DnsFailure('invalid', 'the message is cut off');
  // A TTL with its top bit set is read as zero (RFC 2181 §8).
  const ttl = u32(message, owner.end + 4);
  return { owner: owner.text, type: u16(message, owner.end), ttl: ttl >= 2 ** 31 ? 0 : ttl, rdata, end };
}

/** The record's data must be exactly what its type holds: a name or field ending before or past RDLENGTH is an invalid message. */
function fills(record: RawRecord, used: number): void {
  if (used !== record.end) throw new DnsFailure('invalid', `the data of a record of type ${TYPE_NAMES[record.type] ?? String(record.type)} does not fill its RDLENGTH`);
}

/** A name in the record's data, which must start inside it; the caller checks where it ends (`fills`). */
function nameIn(message: Uint8Array, record: RawRecord, at: number): { text: string; end: number } {
  if (at >= record.end) throw new DnsFailure('invalid', `the data of a record of type ${TYPE_NAMES[record.type] ?? String(record.type)} does not fill its RDLENGTH`);
  return presentName(message, at);
}

/** An A or AAAA record's address from its 4 or 16 octets (RFC 1035 §3.4.1, RFC 3596 §2.2). */
function addressIn(message: Uint8Array, record: RawRecord, type: 'A' | 'AAAA'): string {
  fills(record, record.rdata + (type === 'A' ? 4 : 16));
  const octets = Array.from(message.subarray(record.rdata, record.end));
  return ipaddr.fromByteArray(octets).toString();
}

/** TXT: its character-strings, which must fill RDLENGTH exactly (RFC 1035 §3.3.14). */
function txtIn(message: Uint8Array, record: RawRecord): string {
  const parts: Uint8Array[] = [];
  let at = record.rdata;
  while (at < record.end) {
    const length = message[at] ?? 0;
    parts.push(message.subarray(at + 1, at + 1 + length));
    at += 1 + length;
  }
  fills(record, at);
  return txtValue(parts);
}

/** The answer a record gives, or undefined for a type outside the allowlist (DNAME, RRSIG, …). */
function answerOf(message: Uint8Array, record: RawRecord): DnsAnswer | undefined {
  const type = TYPE_NAMES[record.type];
  const base = { name: record.owner, ttl_seconds: ttlOf(record.ttl) };
  if (type === undefined || type === 'SOA') return undefined;
  // By shape (src/common/dns-types.ts): a new type of an existing shape needs nothing here.
  switch (RECORD_TYPES[type].shape) {
    case 'address':
      return { type: type as 'A' | 'AAAA', ...base, address: addressIn(message, record, type as 'A' | 'AAAA') };
    case 'target': {
      const target = nameIn(message, record, record.rdata);
      fills(record, target.end);
      return { type: type as Extract<DnsAnswer, { target: string }>['type'], ...base, target: target.text };
    }
    case 'exchange': {
      const exchange = nameIn(message, record, record.rdata + 2);
      fills(record, exchange.end);
      return { type: type as Extract<DnsAnswer, { exchange: string }>['type'], ...base, preference: u16(message, record.rdata), exchange: exchange.text };
    }
    case 'text':
      return { type: type as Extract<DnsAnswer, { value: string }>['type'], ...base, value: txtIn(message, record) };
  }
}

/** An SOA's MINIMUM (RFC 1035 §3.3.13: MNAME, RNAME, then five 32-bit fields, MINIMUM last). */
function soaMinimum(message: Uint8Array, record: RawRecord): number {
  const mname = nameIn(message, record, record.rdata);
  const rname = nameIn(message, record, mname.end);
  fills(record, rname.end + 20);
  return u32(message, rname.end + 16);
}

interface DecodedResponse {
  truncated: boolean;
  result: DnsResult;
}

/**
 * Decodes and checks an upstream response against the query it answers: it must be a response
 * to the same question (RFC 5452 §9.1), well formed, and within the spec's bounds.
 */
export function decodeResponse(message: Uint8Array, name: string, type: DnsType): DecodedResponse {
  // The header's counts must fit in the message before dns-packet walks them: a question takes 5
  // octets at least (a root name, QTYPE, QCLASS) and a record 11 (RFC 1035 §4.1.2-3). Past its
  // end, dns-packet's read position becomes NaN and it reads every record again from the start, so
  // a 100-octet message claiming 65 535 records had it decode 105 473 of them (found by fuzzing).
  const least = 12 + u16(message, 4) * 5 + (u16(message, 6) + u16(message, 8) + u16(message, 10)) * 11;
  if (message.length < 12 || least > message.length) throw new DnsFailure('invalid', `its header counts more records than ${String(message.length)} octets hold`);
  let packet: dnsPacket.DecodedPacket;
  try {
    packet = dnsPacket.decode(Buffer.from(message.buffer, message.byteOffset, message.byteLength));
  } catch {
    throw new DnsFailure('invalid', 'the message could not be decoded');
  }
  // dns-packet reads record data past the end of a cut message without complaint (an A record
  // becomes "192.0.undefined.undefined"): it must have consumed no more than was received.
  // A read position that is not a number (dns-packet's, past a cut TXT record) is a cut message too.
  if (!(dnsPacket.decode.bytes <= message.byteLength)) throw new DnsFailure('invalid', 'the message is cut off');
  if (!packet.flag_qr) throw new DnsFailure('invalid', 'the message is not a response');
  const question = packet.questions?.[0];
  // Names are read from the octets themselves (presentation.ts), walking the message as
  // dns-packet did: the header, the one question, then each answer record (RFC 1035 §4.1).
  const asked = packet.questions?.length === 1 ? presentName(message, 12) : undefined;
  if (
    asked === undefined ||
    question === undefined ||
    question.type !== type ||
    (question.class ?? 'IN') !== 'IN' ||
    asked.text !== name
  ) {
    throw new DnsFailure('invalid', 'its question does not match the query');
  }
  const responseCode = RCODES[(packet.flags ?? 0) & 0xf] ?? 'other';
  if (packet.flag_tc) return { truncated: true, result: { responseCode, answers: [], cacheTtl: 0 } };

  const answers: DnsAnswer[] = [];
  let at = asked.end + 4; // QTYPE, QCLASS
  // The answer section by ANCOUNT, then the authority section by NSCOUNT (RFC 1035 §4.1.1), each
  // record walked by its RDLENGTH.
  for (let i = 0; i < u16(message, 6); i++) {
    const record = recordAt(message, at);
    at = record.end;
    const answer = answerOf(message, record);
    if (answer === undefined) continue;
    answers.push(answer);
    if (answers.length > MAX_ANSWERS) throw new DnsFailure('too_large', `more than ${MAX_ANSWERS} answers`);
  }
  let negativeTtl: number | undefined;
  for (let i = 0; i < u16(message, 8); i++) {
    const record = recordAt(message, at);
    at = record.end;
    if (record.type === 6 && negativeTtl === undefined) negativeTtl = Math.min(record.ttl, soaMinimum(message, record));
  }
  return { truncated: false, result: { responseCode, answers, cacheTtl: cacheTtl(responseCode, answers, negativeTtl) } };
}

/**
 * Positive answers live for their smallest TTL. A negative answer (NXDOMAIN, or NODATA) lives
 * for the SOA's TTL or MINIMUM, whichever is smaller (RFC 2308 §5), and not at all without an
 * SOA. Failures (SERVFAIL, REFUSED, others) are never cached.
 */
function cacheTtl(code: ResponseCode, answers: DnsAnswer[], negativeTtl: number | undefined): number {
  if (code === 'no_error' && answers.length > 0) return Math.min(...answers.map((a) => a.ttl_seconds));
  if (code !== 'no_error' && code !== 'name_error') return 0;
  // The first SOA of the authority section: its TTL or MINIMUM, whichever is smaller.
  return negativeTtl === undefined ? 0 : ttlOf(negativeTtl);
}
