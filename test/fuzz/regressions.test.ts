// Inputs the fuzz targets found breaking an invariant (issue 50), kept in the corpus as
// fuzz/corpus/<target>/regression-*, each with what the parser should have done. While a finding's
// invariant is listed in fuzz/known-findings.ts its case is `it.fails` (it holds the bug in place,
// and fails once the bug is gone); deleting the entry when the fix lands makes it a plain `it`
// (docs/fuzzing.md, "Findings").
import { describe, expect, it } from 'vitest';
import { readCorpus } from '../../fuzz/corpus.js';
import { KNOWN_FINDINGS } from '../../fuzz/known-findings.js';
import { TARGETS, type TargetName } from '../../fuzz/registry.js';
import { decodeResponse } from '../../src/engines/dns/wire.js';
import { parseProxyHeader } from '../../src/runtime/node/adapter/proxy-protocol.js';
import { DnsFailure } from '../../src/core/ports/dns-transport.js';

function input(target: TargetName, name: string): Buffer {
  const entry = readCorpus(target).find((e) => e.name === name);
  if (entry === undefined) throw new Error(`no fuzz/corpus/${target}/${name}`);
  return Buffer.from(entry.bytes);
}

/** `it.fails` while the finding of `invariant` is open, `it` once it is fixed. */
const finding = (invariant: string) => (KNOWN_FINDINGS.some((f) => f.invariant === invariant) ? it.fails : it);

const refused = (run: () => unknown): DnsFailure | undefined => {
  try {
    run();
  } catch (err) {
    if (err instanceof DnsFailure) return err;
    throw err;
  }
  return undefined;
};

describe('fuzz findings', () => {
  // RFC 1035 §3.4.1: an A record's RDATA is its 4 octets. dns-packet reads 4 and moves on by 6
  // whatever RDLENGTH says, while decodeResponse walks the owner names by RDLENGTH: the second
  // record is answered as b.example with 101.0.0.1, octets of "example" that were never an address.
  finding('dns/answer-is-its-record')('dns: an A record whose RDLENGTH is 6 is refused as invalid, not answered with octets from outside it', () => {
    const message = input('dns', 'regression-a-rdlength-6');
    expect(refused(() => decodeResponse(message, 'a.example', 'A'))?.kind).toBe('invalid');
    TARGETS.dns.fuzz(message);
  });

  // RFC 1035 §3.3.9: MX RDATA is a 16-bit preference and a name; an RDLENGTH of 0 holds neither.
  // It is answered with preference 0 and the root as exchange, read from the octets after it.
  finding('dns/answer-is-its-record')('dns: an MX record whose RDLENGTH is 0 is refused as invalid', () => {
    const message = input('dns', 'regression-mx-rdlength-0');
    expect(refused(() => decodeResponse(message, '', 'A'))?.kind).toBe('invalid');
    TARGETS.dns.fuzz(message);
  });

  // RFC 1035 §3.3.13: SOA RDATA is two names and five 32-bit fields. With RDLENGTH 0 they are read
  // from the octets after the record, and the NXDOMAIN is cached for their MINIMUM (RFC 2308 §5).
  finding('dns/negative-ttl-is-the-soas')('dns: an SOA record whose RDLENGTH is 0 gives a negative answer no cache time from outside it', () => {
    const message = input('dns', 'regression-soa-rdlength-0');
    expect(refused(() => decodeResponse(message, 'nope.example.test', 'A'))?.kind).toBe('invalid');
    TARGETS.dns.fuzz(message);
  });

  // A TXT record whose RDLENGTH (21) holds two character-strings, cut after the first: dns-packet
  // reads the next length octet past the end, its offset becomes NaN, and `decode.bytes > length`
  // is false for NaN, so the cut message was answered "hello world".
  finding('dns/accepted-message-is-whole')('dns: a message cut inside a TXT record is refused as invalid, not answered in part', () => {
    const message = input('dns', 'regression-txt-cut-after-a-string');
    expect(refused(() => decodeResponse(message, 'a.example', 'TXT'))?.kind).toBe('invalid');
    TARGETS.dns.fuzz(message);
  });

  // 100 octets whose header counts 49 191 answers and 56 266 authority records: once dns-packet's
  // offset is NaN every record decodes again from offset 0, so all of them are decoded (105 473
  // records, about 100 ms of CPU) before the message is refused. Each record takes 11 octets at
  // least; a decode should stop at what the message can hold.
  finding('dns/work-bounded-by-the-message')('dns: a message decodes no more records than its octets can hold', () => {
    const message = input('dns', 'regression-100-octets-105k-records');
    expect(refused(() => decodeResponse(message, 'ku__9x-.xnv4xt', 'A'))?.kind).toBe('invalid');
    TARGETS.dns.fuzz(message);
  });

  // proxy-protocol.txt §2.1: a v1 line is at most 107 bytes. A 133-byte TCP4 line (a destination
  // address of 100 digits, which is not checked) is accepted when it arrives whole, and refused
  // when its first 107 bytes arrive first: whether its source is believed depends on the chunking.
  finding('proxy/v1-at-most-107-bytes')('proxy-protocol: a v1 line over 107 bytes is invalid however it arrives', () => {
    const line = input('proxy-protocol', 'regression-v1-line-over-107-bytes');
    expect(parseProxyHeader(line).status).toBe('invalid');
    expect(parseProxyHeader(line.subarray(0, 107)).status).toBe('invalid');
    TARGETS['proxy-protocol'].fuzz(line);
  });
});
