// The pure DNS codec (wire.ts) on hand-built messages: what an upstream can send that is odd,
// broken or hostile, and what each must become (an answer, or a DnsFailure that maps to 502).
import dnsPacket from 'dns-packet';
import { describe, expect, it } from 'vitest';
import { decodeResponse, encodeQuery, messageId } from './wire.js';
import { DNS_TYPES } from '../../common/dns-types.js';
import { DnsFailure } from '../../core/ports/dns-transport.js';

type Answer = dnsPacket.Answer;

function reply(answers: Answer[], overrides: Partial<dnsPacket.Packet> = {}): Buffer {
  return dnsPacket.encode({
    type: 'response',
    id: 0x1234,
    flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE,
    questions: [{ type: 'A', name: 'a.example' }],
    answers,
    ...overrides,
  });
}

const A: Answer = { type: 'A', name: 'a.example', ttl: 60, data: '192.0.2.1' };

function failure(run: () => unknown): DnsFailure {
  try {
    run();
  } catch (err) {
    if (err instanceof DnsFailure) return err;
    throw new Error(`not a DnsFailure: ${String(err)}`);
  }
  throw new Error('decoded without failing');
}

describe('encodeQuery', () => {
  it('sets RD, one question, EDNS(0) at 1232 and a random ID', () => {
    const ids = new Set<number>();
    for (let i = 0; i < 50; i++) {
      const query = dnsPacket.decode(Buffer.from(encodeQuery('a.example', 'MX')));
      ids.add(query.id ?? -1);
      expect(query.flag_rd).toBe(true);
      expect(query.questions).toEqual([{ name: 'a.example', type: 'MX', class: 'IN' }]);
      expect(query.additionals?.[0]).toMatchObject({ type: 'OPT', udpPayloadSize: 1232 });
    }
    expect(ids.size).toBeGreaterThan(45);
  });
  it('writes the bytes dns-packet writes for the same query, for every type, the root and long names', () => {
    const names = ['a.example', '', 'www.example.test', '4.3.2.1.in-addr.arpa', `${'a'.repeat(63)}.${'b'.repeat(63)}.example`, '_sip._tcp.example.com', 'xn--bcher-kva.example'];
    for (const name of names) {
      for (const type of DNS_TYPES) {
        const ours = Buffer.from(encodeQuery(name, type));
        const theirs = dnsPacket.encode({
          type: 'query',
          id: ours.readUInt16BE(0),
          flags: dnsPacket.RECURSION_DESIRED,
          questions: [{ type, name, class: 'IN' }],
          additionals: [{ type: 'OPT', name: '.', udpPayloadSize: 1232, extendedRcode: 0, ednsVersion: 0, flags: 0, flag_do: false, options: [] }],
        });
        expect(ours.toString('hex'), `${name} ${type}`).toBe(theirs.toString('hex'));
      }
    }
  });

  it('refuses a name that is not canonical ASCII rather than writing it wrong', () => {
    expect(failure(() => encodeQuery('bücher.example', 'A')).kind).toBe('invalid');
    expect(failure(() => encodeQuery('a b.example', 'A')).kind).toBe('invalid');
    for (const bad of ['a..example', 'example.', '.example', `${'a'.repeat(64)}.example`]) {
      expect(failure(() => encodeQuery(bad, 'A')).kind, bad).toBe('invalid');
    }
  });

  it('reads the ID of a message, and -1 for one too short to have one', () => {
    expect(messageId(reply([A]))).toBe(0x1234);
    expect(messageId(new Uint8Array([0x12]))).toBe(-1);
  });
});

describe('decodeResponse', () => {
  it('a compression pointer past the end, or into a loop, is invalid', () => {
    const message = reply([A]);
    // The question's name starts at offset 12: point it past the end, then at itself.
    const past = Buffer.from(message);
    past[12] = 0xc0;
    past[13] = 0xff;
    expect(failure(() => decodeResponse(past, 'a.example', 'A')).kind).toBe('invalid');
    const loop = Buffer.from(message);
    loop[12] = 0xc0;
    loop[13] = 12;
    expect(failure(() => decodeResponse(loop, 'a.example', 'A')).kind).toBe('invalid');
  });

  it('a message cut at any length is invalid, never a crash or a partial answer', () => {
    const message = reply([A, { ...A, data: '192.0.2.2' }]);
    for (let length = 0; length < message.length; length++) {
      expect(failure(() => decodeResponse(message.subarray(0, length), 'a.example', 'A')).kind).toBe('invalid');
    }
  });

  it('a query (QR clear) is not a response', () => {
    const query = Buffer.from(encodeQuery('a.example', 'A'));
    expect(failure(() => decodeResponse(query, 'a.example', 'A')).message).toMatch(/not a response/);
  });

  it('TC set: reported as truncated, with no answers taken from it', () => {
    const truncated = reply([A], { flags: dnsPacket.TRUNCATED_RESPONSE | dnsPacket.RECURSION_DESIRED });
    expect(decodeResponse(truncated, 'a.example', 'A')).toEqual({ truncated: true, result: { responseCode: 'no_error', answers: [], cacheTtl: 0 } });
  });

  it('an OPT record in the answer section is skipped, not reported or fatal', () => {
    const opt = { type: 'OPT', name: '.', udpPayloadSize: 1232, extendedRcode: 0, ednsVersion: 0, flags: 0, options: [] } as unknown as Answer;
    const { result } = decodeResponse(reply([opt, A]), 'a.example', 'A');
    expect(result.answers).toEqual([{ type: 'A', name: 'a.example', ttl_seconds: 60, address: '192.0.2.1' }]);
  });

  it('TXT bytes that are not UTF-8 decode with U+FFFD in their place', () => {
    const txt: Answer = { type: 'TXT', name: 'a.example', ttl: 60, data: [Buffer.from([0x6f, 0x6b, 0xff, 0xfe, 0x21])] };
    const { result } = decodeResponse(reply([txt], { questions: [{ type: 'TXT', name: 'a.example' }] }), 'a.example', 'TXT');
    expect(result.answers).toEqual([{ type: 'TXT', name: 'a.example', ttl_seconds: 60, value: 'ok\uFFFD\uFFFD!' }]);
  });

  it('the question may come back in other letter case (0x20 encoding, RFC 5452 §9.1 note); names are lower-cased', () => {
    const mixed = reply([{ ...A, name: 'A.ExAmPlE' }], { questions: [{ type: 'A', name: 'A.eXaMpLe' }] });
    const { result } = decodeResponse(mixed, 'a.example', 'A');
    expect(result.answers[0]).toMatchObject({ name: 'a.example' });
  });

  it('names are read from their octets in RFC 1035 presentation form: controls, a dot or a backslash inside a label, bytes that are no UTF-8', () => {
    const cname: Answer = { type: 'CNAME', name: 'a.example', ttl: 60, data: 'qqqqqqqq.example' };
    const message = reply([cname, { type: 'MX', name: 'a.example', ttl: 60, data: { preference: 5, exchange: 'qqqqqqqq.example' } }], { questions: [{ type: 'CNAME', name: 'a.example' }] });
    // ESC, BEL, CR, a dot, a backslash, 0xff, an upper-case letter and a space in each target's first label.
    const label = [0x1b, 0x07, 0x0d, 0x2e, 0x5c, 0xff, 0x51, 0x20];
    let at = message.indexOf('qqqqqqqq');
    while (at !== -1) {
      message.set(label, at);
      at = message.indexOf('qqqqqqqq', at);
    }
    const { result } = decodeResponse(message, 'a.example', 'CNAME');
    const presented = '\\027\\007\\013\\.\\\\\\255q\\032.example';
    expect(result.answers).toEqual([
      { type: 'CNAME', name: 'a.example', ttl_seconds: 60, target: presented },
      { type: 'MX', name: 'a.example', ttl_seconds: 60, preference: 5, exchange: presented },
    ]);
  });

  it('a name whose presentation form is over 253 characters is too large', () => {
    const message = reply([{ type: 'CNAME', name: 'a.example', ttl: 60, data: `${'q'.repeat(63)}.${'q'.repeat(63)}.example` }], { questions: [{ type: 'CNAME', name: 'a.example' }] });
    // 126 octets of 0x01, four characters each once escaped.
    for (let at = message.indexOf('q'); at !== -1; at = message.indexOf('q', at)) message[at] = 1;
    expect(failure(() => decodeResponse(message, 'a.example', 'CNAME')).kind).toBe('too_large');
  });

  it('a reply to another name, type or class is invalid', () => {
    expect(failure(() => decodeResponse(reply([A], { questions: [{ type: 'A', name: 'b.example' }] }), 'a.example', 'A')).message).toMatch(/question/);
    expect(failure(() => decodeResponse(reply([A], { questions: [{ type: 'AAAA', name: 'a.example' }] }), 'a.example', 'A')).message).toMatch(/question/);
    expect(failure(() => decodeResponse(reply([A], { questions: [{ type: 'A', name: 'a.example', class: 'CH' }] }), 'a.example', 'A')).message).toMatch(/question/);
    expect(failure(() => decodeResponse(reply([A], { questions: [] }), 'a.example', 'A')).message).toMatch(/question/);
  });

  it('more than 50 answers, or a TXT value over 2048 characters, is too large', () => {
    const many = Array.from({ length: 51 }, (_, i) => ({ ...A, data: `192.0.2.${String(i)}` }));
    expect(failure(() => decodeResponse(reply(many), 'a.example', 'A')).kind).toBe('too_large');
    const long: Answer = { type: 'TXT', name: 'a.example', ttl: 60, data: Array.from({ length: 9 }, () => 'x'.repeat(230)) };
    expect(failure(() => decodeResponse(reply([long], { questions: [{ type: 'TXT', name: 'a.example' }] }), 'a.example', 'TXT')).kind).toBe('too_large');
  });

  it('caps TTLs at 86400 and keeps a negative answer for its SOA minimum (RFC 2308 §5)', () => {
    const { result } = decodeResponse(reply([{ ...A, ttl: 999_999 }]), 'a.example', 'A');
    expect(result.answers[0]?.ttl_seconds).toBe(86_400);
    const soa: Answer = { type: 'SOA', name: 'example', ttl: 900, data: { mname: 'ns.example', rname: 'h.example', serial: 1, refresh: 1, retry: 1, expire: 1, minimum: 300 } };
    const negative = reply([], { flags: dnsPacket.RECURSION_AVAILABLE | 3, authorities: [soa] });
    expect(decodeResponse(negative, 'a.example', 'A').result).toEqual({ responseCode: 'name_error', answers: [], cacheTtl: 300 });
  });

  it('skips record types outside the allowlist', () => {
    const rrsig = reply([{ type: 'DNAME', name: 'a.example', ttl: 60, data: 'b.example' }, A]);
    expect(decodeResponse(rrsig, 'a.example', 'A').result.answers).toHaveLength(1);
  });
});

// Found by fuzzing (fuzz/targets/dns.ts): dns-packet reads an A, AAAA, MX, CNAME, NS,
// PTR or SOA record's data by its type, whatever its RDLENGTH says, so a record whose RDLENGTH
// lies was answered with octets from outside it. Each record's data must now fill its RDLENGTH.
describe('decodeResponse and RDLENGTH', () => {
  /** The reply with its last record's RDLENGTH (the two octets before its `dataLength` data octets) set to `rdlength`, and `extra` octets appended. */
  function lying(message: Buffer, dataLength: number, rdlength: number, extra: number[] = []): Buffer {
    const out = Buffer.concat([message, Buffer.from(extra)]);
    out.writeUInt16BE(rdlength, message.length - dataLength - 2);
    return out;
  }

  it('refuses an A record whose RDLENGTH is shorter or longer than its four octets', () => {
    const good = reply([A]);
    expect(decodeResponse(good, 'a.example', 'A').result.answers).toEqual([{ type: 'A', name: 'a.example', ttl_seconds: 60, address: '192.0.2.1' }]);
    expect(failure(() => decodeResponse(lying(good, 4, 8, [10, 0, 0, 1]), 'a.example', 'A')).message).toContain('the data of a record of type A does not fill its RDLENGTH');
    expect(failure(() => decodeResponse(lying(good, 4, 2), 'a.example', 'A')).kind).toBe('invalid');
  });

  it('refuses a PTR whose name runs past its RDLENGTH, and one that leaves octets unused', () => {
    const ptr = reply([{ type: 'PTR', name: 'a.example', ttl: 60, data: 'host.example' }], { questions: [{ type: 'PTR', name: 'a.example' }] });
    expect(decodeResponse(ptr, 'a.example', 'PTR').result.answers).toMatchObject([{ target: 'host.example' }]);
    const nameLength = 'host.example'.length + 2;
    expect(failure(() => decodeResponse(lying(ptr, nameLength, nameLength - 3), 'a.example', 'PTR')).kind).toBe('invalid');
    expect(failure(() => decodeResponse(lying(ptr, nameLength, nameLength + 2, [0, 0]), 'a.example', 'PTR')).kind).toBe('invalid');
  });

  it("takes a negative answer's lifetime from an SOA that fills its RDLENGTH, and refuses one that does not", () => {
    const soa: Answer = { type: 'SOA', name: 'example', ttl: 3600, data: { mname: 'ns.example', rname: 'h.example', serial: 1, refresh: 2, retry: 3, expire: 4, minimum: 300 } };
    const negative = reply([], { flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | 3, authorities: [soa] });
    expect(decodeResponse(negative, 'a.example', 'A').result).toEqual({ responseCode: 'name_error', answers: [], cacheTtl: 300 });
    const soaLength = 'ns.example'.length + 2 + 'h.example'.length + 2 + 20;
    expect(failure(() => decodeResponse(lying(negative, soaLength, soaLength - 8), 'a.example', 'A')).message).toContain('the data of a record of type SOA does not fill its RDLENGTH');
  });
});
