// Fuzz target: an upstream's DNS message (src/engines/dns/wire.ts). decodeResponse's contract:
// an answer that is a response to the question asked, well formed and within the API's bounds,
// or a DnsFailure of kind `invalid` or `too_large` (a 502); nothing else, whatever the bytes.
import dnsPacket from 'dns-packet';
import ipaddr from 'ipaddr.js';
import { DNS_TYPES, MAX_ANSWERS, MAX_NAME_LENGTH, MAX_TTL, MAX_TXT_CHARACTERS, type DnsAnswer, type DnsType } from '../../src/common/dns-types.js';
import { presentedName } from '../../src/engines/dns/presentation.js';
import { decodeResponse, messageId } from '../../src/engines/dns/wire.js';
import { check, json, outcome } from '../invariant.js';
import { characterStrings, presentationLabels, readMessage, readName, sameName, soaMinimum, type WireRecord } from '../rfc1035.js';
import { DnsFailure } from '../../src/core/ports/dns-transport.js';

type Decoder = ((buf: Buffer, offset?: number) => unknown) & { bytes: number };

/**
 * How many questions and resource records dns-packet decodes for decodeResponse, counted by
 * wrapping its `question.decode` and `answer.decode`, which the library calls through its exports
 * object (so it sets `.bytes` on the wrapper, and reads it there). This changes nothing but the
 * count, and only in the process that loads this target.
 */
const decoded = { questions: 0, records: 0 };
const codecs = dnsPacket as unknown as { question: { decode: Decoder }; answer: { decode: Decoder } };
for (const [codec, counter] of [[codecs.question, 'questions'], [codecs.answer, 'records']] as const) {
  const decode = codec.decode;
  const counting = ((buf: Buffer, offset?: number) => {
    decoded[counter]++;
    return decode(buf, offset);
  }) as Decoder;
  counting.bytes = 0;
  codec.decode = counting;
}

/** The allowlisted types by TYPE value (RFC 1035 §3.2.2, AAAA RFC 3596 §2.1). */
const TYPES = new Map<number, DnsType>([[1, 'A'], [2, 'NS'], [5, 'CNAME'], [12, 'PTR'], [15, 'MX'], [16, 'TXT'], [28, 'AAAA']]);
const RESPONSE_CODES = new Set(['no_error', 'name_error', 'refused', 'server_failure', 'other']);
const DOTTED_QUAD = /^(?:(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])$/;

/**
 * The question the message itself carries, so that a mutated message still reaches the answer
 * section (a reply to another question is refused first). Read with the decoder's own name
 * reader: this only picks the input; every check below reads the octets independently.
 */
function questionOf(message: Uint8Array): { name: string; type: DnsType } {
  try {
    const { text, end } = presentedName(message, 12);
    const type = TYPES.get(((message[end] ?? 0) << 8) | (message[end + 1] ?? 0));
    return { name: text, type: type ?? DNS_TYPES[message.length % DNS_TYPES.length] ?? 'A' };
  } catch {
    return { name: 'a.example', type: 'A' };
  }
}

/** The answer's fields are of the contract's types and within its bounds (docs/api.md, "DNS"). */
function checkBounds(answer: DnsAnswer): void {
  const where = () => json(answer);
  check(answer.name.length <= MAX_NAME_LENGTH && !/[A-Z]/.test(answer.name), 'dns/answer-in-bounds', () => `owner name over ${MAX_NAME_LENGTH} characters or not lower case: ${where()}`);
  check(Number.isInteger(answer.ttl_seconds) && answer.ttl_seconds >= 0 && answer.ttl_seconds <= MAX_TTL, 'dns/answer-in-bounds', () => `TTL outside 0-${MAX_TTL}: ${where()}`);
  switch (answer.type) {
    case 'A':
      check(DOTTED_QUAD.test(answer.address), 'dns/answer-in-bounds', () => `A address is no dotted quad: ${where()}`);
      break;
    case 'AAAA':
      check(ipaddr.IPv6.isValid(answer.address) && !answer.address.includes('%'), 'dns/answer-in-bounds', () => `AAAA address is no IPv6 address: ${where()}`);
      break;
    case 'CNAME':
    case 'NS':
    case 'PTR':
      check(answer.target.length <= MAX_NAME_LENGTH, 'dns/answer-in-bounds', () => `target over ${MAX_NAME_LENGTH} characters: ${where()}`);
      break;
    case 'MX':
      check(Number.isInteger(answer.preference) && answer.preference >= 0 && answer.preference <= 0xffff, 'dns/answer-in-bounds', () => `MX preference is no 16-bit number: ${where()}`);
      check(answer.exchange.length <= MAX_NAME_LENGTH, 'dns/answer-in-bounds', () => `exchange over ${MAX_NAME_LENGTH} characters: ${where()}`);
      break;
    case 'TXT':
      check(Array.from(answer.value).length <= MAX_TXT_CHARACTERS, 'dns/answer-in-bounds', () => `TXT over ${MAX_TXT_CHARACTERS} characters`);
      break;
  }
}

const utf8 = new TextDecoder('utf-8');

/** A TTL as answered: one with its top bit set reads as zero (RFC 2181 §8), and none is kept past a day (the contract's bound). */
const ttlOf = (ttl: number): number => (ttl >= 2 ** 31 ? 0 : Math.min(ttl, MAX_TTL));

/** Whether a name in presentation form stands for the name written at `at`, filling the octets up to `end`. */
function namesAt(message: Uint8Array, text: string, at: number, end: number): boolean {
  const wire = readName(message, at);
  const labels = presentationLabels(text);
  return wire !== undefined && labels !== undefined && wire.end === end && sameName(wire.labels, labels);
}

/**
 * An answer is what its own record says, read by RFC 1035 (rfc1035.ts): the same owner, TTL and
 * data, and data that fills the record's RDLENGTH exactly (§3.4.1: an A RDATA is 4 octets;
 * RFC 3596 §2.2: AAAA 16; §3.3.1, §3.3.9, §3.3.11, §3.3.12: a name, after MX's 16-bit
 * preference; §3.3.14: TXT character-strings). A decoder that walks the records otherwise than
 * RDLENGTH says pairs one record's name with another's octets.
 */
function checkRecord(message: Uint8Array, answer: DnsAnswer, record: WireRecord): void {
  const ok = (holds: boolean, what: string) => {
    check(holds, 'dns/answer-is-its-record', () => `${what}: answered ${json(answer)} for a ${String(record.type)} record of RDLENGTH ${record.rdata.length} at offset ${record.rdataAt - 10}`);
  };
  ok(TYPES.get(record.type) === answer.type, 'the type differs');
  ok(sameName(record.owner.labels, presentationLabels(answer.name) ?? []) && presentationLabels(answer.name) !== undefined, 'the owner differs');
  ok(answer.ttl_seconds === ttlOf(record.ttl), 'the TTL differs');
  const end = record.rdataAt + record.rdata.length;
  switch (answer.type) {
    case 'A':
      ok(record.rdata.length === 4 && answer.address === record.rdata.join('.'), 'the address is not the 4 octets of RDATA');
      break;
    case 'AAAA':
      ok(record.rdata.length === 16 && ipaddr.parse(answer.address).toByteArray().every((o, i) => o === record.rdata[i]), 'the address is not the 16 octets of RDATA');
      break;
    case 'CNAME':
    case 'NS':
    case 'PTR':
      ok(namesAt(message, answer.target, record.rdataAt, end), 'the target is not the name that fills RDATA');
      break;
    case 'MX':
      ok(record.rdata.length >= 3 && answer.preference === ((record.rdata[0] ?? 0) << 8) + (record.rdata[1] ?? 0), 'the preference is not the first 16 bits of RDATA');
      ok(namesAt(message, answer.exchange, record.rdataAt + 2, end), 'the exchange is not the name that fills the rest of RDATA');
      break;
    case 'TXT': {
      const strings = characterStrings(record.rdata);
      ok(strings !== undefined && answer.value === utf8.decode(Uint8Array.from(strings.flatMap((s) => [...s]))), 'the value is not the character-strings that fill RDATA');
      break;
    }
  }
}

export function fuzz(data: Buffer): void {
  // The ID is the first two octets, or -1 when there are not two (RFC 1035 §4.1.1).
  const id = messageId(data);
  check(id === (data.length < 2 ? -1 : data.readUInt16BE(0)), 'dns/message-id', () => `messageId gave ${String(id)}`);

  const { name, type } = questionOf(data);
  decoded.questions = decoded.records = 0;
  const response = outcome('dns/only-dns-failures', () => decodeResponse(data, name, type), (err) => err instanceof DnsFailure && (err.kind === 'invalid' || err.kind === 'too_large'));
  // The work is bounded by the message: a question takes at least 5 octets and a record 11 (a
  // root name and the fixed fields, RFC 1035 §4.1.2, §4.1.3) after the 12-octet header; one more
  // of each is allowed for the one a decoder gives up on.
  check(
    5 * (decoded.questions - 1) + 11 * (decoded.records - 1) <= Math.max(0, data.length - 12),
    'dns/work-bounded-by-the-message',
    () => `${String(decoded.questions)} questions and ${String(decoded.records)} records decoded from ${String(data.length)} octets`,
  );
  if (!response.ok) return;
  const { truncated, result } = response.value;

  check(RESPONSE_CODES.has(result.responseCode), 'dns/result-in-bounds', () => `response code ${result.responseCode}`);
  check(Number.isInteger(result.cacheTtl) && result.cacheTtl >= 0 && result.cacheTtl <= MAX_TTL, 'dns/result-in-bounds', () => `cache TTL ${String(result.cacheTtl)}`);
  check(result.answers.length <= MAX_ANSWERS, 'dns/result-in-bounds', () => `${String(result.answers.length)} answers`);
  // TC: nothing of a truncated message is used (it is asked again over TCP), nor cached.
  if (truncated) {
    check(result.answers.length === 0 && result.cacheTtl === 0, 'dns/truncated-is-empty', () => json(result));
    return;
  }
  for (const answer of result.answers) checkBounds(answer);
  // A positive answer is cached for its smallest TTL (RFC 2181 §5.2 keeps an RRset's alike).
  if (result.responseCode === 'no_error' && result.answers.length > 0) {
    check(result.cacheTtl === Math.min(...result.answers.map((a) => a.ttl_seconds)), 'dns/result-in-bounds', () => `cache TTL ${String(result.cacheTtl)} is not the smallest answer TTL`);
  }

  const wire = readMessage(data);
  // The question and every answer record lie within the message (a cut one is refused).
  check(wire !== undefined, 'dns/accepted-message-is-whole', () => 'an answer came from a message whose question and answer records do not fit in it by RFC 1035 §4.1');
  const records = wire.answers.filter((r) => TYPES.has(r.type));
  check(records.length === result.answers.length, 'dns/answer-is-its-record', () => `${String(result.answers.length)} answers from ${String(records.length)} allowlisted records`);
  result.answers.forEach((answer, i) => {
    const record = records[i];
    if (record !== undefined) checkRecord(data, answer, record);
  });

  // A negative answer (NXDOMAIN, or NODATA) is cached for its SOA's TTL or MINIMUM, whichever is
  // smaller, and not at all without an SOA (RFC 2308 §5): the first SOA of the authority section,
  // read from its own octets.
  if (result.responseCode === 'name_error' || (result.responseCode === 'no_error' && result.answers.length === 0)) {
    const soa = wire.authorities?.find((r) => r.type === 6);
    const minimum = soa === undefined ? undefined : soaMinimum(data, soa);
    const expected = soa === undefined ? 0 : minimum === undefined ? undefined : Math.min(ttlOf(soa.ttl), minimum);
    check(result.cacheTtl === expected, 'dns/negative-ttl-is-the-soas', () => `cached for ${String(result.cacheTtl)} s where the SOA record says ${expected === undefined ? 'nothing (its RDATA is no SOA)' : String(expected)}`);
  }
}
