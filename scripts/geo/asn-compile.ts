// Build step (scripts/compile-geo.mjs): the embedded ASN CSVs (ip-location-db's RouteViews + RIR +
// DB-IP merge, CC BY 4.0) compiled into the table src/runtime/node/ports/geo-lookup/asn-table.ts reads (that
// file gives the layout; range-blocks.ts the ranges'). Each `start,end,asn,org` row becomes a range
// from its start, and the address after its end, unless the next row starts there, a range of no
// record: the gap. Each distinct (AS number, organisation) is one record, each name stored once.
import { readFileSync } from 'node:fs';
import { ASN_MAGIC, ASN_RECORD_WORDS, ASN_VERSION } from '../../src/runtime/node/ports/geo-lookup/asn-table.js';
import { NO_RECORD } from '../../src/runtime/node/ports/geo-lookup/range-blocks.js';
import { layTable, TextTable, type Ranges } from './range-encode.js';
import { embeddedAsnPaths } from './sources.js';

const COMMA = 0x2c;
const NEWLINE = 0x0a;
const QUOTE = 0x22;

/** Splits a decimal of up to 128 bits into `width` 32-bit words, most significant first. */
function words(decimal: string, width: number): bigint {
  const value = BigInt(decimal);
  if (value < 0n || value >= 1n << BigInt(32 * width)) throw new Error(`ASN data: address ${decimal} is out of range`);
  return value;
}

/** Each distinct (AS number, organisation) once, each name once. */
class Networks {
  private readonly names = new TextTable(0xffffffff, 'ASN data');
  private readonly numbers = new Map<string, number>();
  private readonly records: number[] = [];

  /** The record number of this network, storing it if it is new. */
  add(asn: number, org: string): number {
    const identity = `${String(asn)}\u0000${org}`;
    let n = this.numbers.get(identity);
    if (n === undefined) {
      n = this.records.length / ASN_RECORD_WORDS;
      if (n >= NO_RECORD) throw new Error('ASN data: more networks than a 3-byte record number holds');
      this.records.push(asn, this.names.add(org));
      this.numbers.set(identity, n);
    }
    return n;
  }

  namesSection(): Buffer {
    return this.names.section();
  }

  recordsSection(): Uint32Array {
    return Uint32Array.from(this.records);
  }
}

/**
 * Reads `start,end,asn,org` lines straight from the file's bytes into a family's ranges, with a
 * range of no record after each row the next does not follow at once.
 */
function readRanges(path: string, width: number, networks: Networks): Ranges {
  const bytes = readFileSync(path);
  const keys: bigint[] = [];
  const numbers: number[] = [];
  const top = (1n << BigInt(32 * width)) - 1n;
  let previousStart = -1n;
  let previousEnd = -1n;
  let at = 0;
  const field = (): string => {
    const from = at;
    at = bytes.indexOf(COMMA, at);
    if (at === -1) at = bytes.length;
    return bytes.toString('latin1', from, at++);
  };
  const push = (key: bigint, n: number) => {
    // A range with the record of the one before it, joined to it, adds nothing.
    if (numbers.length > 0 && numbers[numbers.length - 1] === n) return;
    keys.push(key);
    numbers.push(n);
  };
  while (at < bytes.length) {
    if (bytes[at] === NEWLINE) {
      at++;
      continue;
    }
    const start = words(field(), width);
    const end = words(field(), width);
    const asn = Number(field());
    let org: string;
    if (bytes[at] === QUOTE) {
      // RFC 4180 quoting: the organisation may hold commas; "" is a literal quote.
      const from = ++at;
      while (at < bytes.length && !(bytes[at] === QUOTE && bytes[at + 1] !== QUOTE)) at += bytes[at] === QUOTE ? 2 : 1;
      org = bytes.toString('utf8', from, at).replaceAll('""', '"');
      while (at < bytes.length && bytes[at] !== NEWLINE) at++;
    } else {
      const from = at;
      at = bytes.indexOf(NEWLINE, at);
      if (at === -1) at = bytes.length;
      org = bytes.toString('utf8', from, at);
    }
    at++;
    if (start <= previousStart || end < start) throw new Error(`ASN data: ${path} is not ranges sorted by start (at ${start.toString()})`);
    // A row that starts inside the one before it (one IPv4 row does) takes over from its start: an
    // address belongs to the last row that starts at or below it, if that row reaches it.
    if (start > previousEnd + 1n) push(previousEnd + 1n, NO_RECORD);
    push(start, networks.add(asn, org));
    previousStart = start;
    previousEnd = end;
  }
  if (previousEnd < top) push(previousEnd + 1n, NO_RECORD);
  const out = new Uint32Array(keys.length * width);
  keys.forEach((key, i) => {
    for (let w = 0; w < width; w++) out[i * width + w] = Number((key >> BigInt(32 * (width - 1 - w))) & 0xffffffffn);
  });
  return { width, keys: out, numbers: Uint32Array.from(numbers), count: keys.length };
}

/** The whole table as asn-table.ts reads it. */
export function compileAsn(): Buffer {
  const networks = new Networks();
  const paths = embeddedAsnPaths();
  const families: [Ranges, Ranges] = [readRanges(paths.v4, 1, networks), readRanges(paths.v6, 4, networks)];
  const records = networks.recordsSection();
  return layTable(ASN_MAGIC, ASN_VERSION, networks.namesSection(), records, records.length / ASN_RECORD_WORDS, families);
}
