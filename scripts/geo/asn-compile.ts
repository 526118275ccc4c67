// Build step (scripts/compile-geo.mjs): the embedded ASN CSVs (ip-location-db's RouteViews + RIR +
// DB-IP merge, CC BY 4.0) parsed once into the binary table src/runtime/node/geo/asn-table.ts
// maps at start-up, whose layout (magic, version, path) it takes from that file.
// Parsing 45 MB of CSV took 0.76 s and left about 50 MB of garbage in the heap of every
// process; reading the table takes a few milliseconds and leaves none.
import { readFileSync } from 'node:fs';
import { ASN_MAGIC, ASN_VERSION, type Table } from '../../src/runtime/node/geo/asn-table.js';
import { embeddedAsnPaths } from './sources.js';

const COMMA = 0x2c;
const NEWLINE = 0x0a;
const QUOTE = 0x22;

/** Splits a decimal of up to 128 bits into `width` 32-bit words, most significant first. */
function words(decimal: string, width: number): number[] {
  if (width === 1) return [Number(decimal)];
  const value = BigInt(decimal);
  const out: number[] = [];
  for (let i = width - 1; i >= 0; i--) out.push(Number((value >> BigInt(32 * i)) & 0xffffffffn));
  return out;
}

/**
 * Reads `start,end,asn,org` lines straight from the file's bytes: no whole-file string and no
 * array of lines, so loading leaves little garbage behind (start-up time and resident memory).
 */
function loadTable(path: string, width: number, names: string[], index: Map<string, number>): Table {
  const bytes = readFileSync(path);
  let lines = 0;
  for (let i = bytes.indexOf(NEWLINE); i !== -1; i = bytes.indexOf(NEWLINE, i + 1)) lines++;
  const starts = new Uint32Array((lines + 1) * width);
  const ends = new Uint32Array((lines + 1) * width);
  const asns = new Uint32Array(lines + 1);
  const orgs = new Uint32Array(lines + 1);
  let n = 0;
  let at = 0;
  const field = (): string => {
    const from = at;
    at = bytes.indexOf(COMMA, at);
    if (at === -1) at = bytes.length;
    return bytes.toString('latin1', from, at++);
  };
  while (at < bytes.length) {
    if (bytes[at] === NEWLINE) {
      at++;
      continue;
    }
    const start = field();
    const end = field();
    const asn = field();
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
    starts.set(words(start, width), n * width);
    ends.set(words(end, width), n * width);
    asns[n] = Number(asn);
    let id = index.get(org);
    if (id === undefined) {
      id = names.length;
      names.push(org);
      index.set(org, id);
    }
    orgs[n] = id;
    n++;
  }
  return { starts: starts.subarray(0, n * width), ends: ends.subarray(0, n * width), width, asns: asns.subarray(0, n), orgs: orgs.subarray(0, n) };
}

/** The whole table as asn-table.ts reads it: header, the IPv4 and IPv6 tables, then the names. */
export function compileAsn(): Buffer {
  const names: string[] = [];
  const index = new Map<string, number>();
  const paths = embeddedAsnPaths();
  const v4 = loadTable(paths.v4, 1, names, index);
  const v6 = loadTable(paths.v6, 4, names, index);
  const encoded = names.map((name) => Buffer.from(name, 'utf8'));
  const offsets = new Uint32Array(encoded.length + 1);
  encoded.forEach((bytes, i) => {
    offsets[i + 1] = (offsets[i] ?? 0) + bytes.length;
  });
  const header = new Uint32Array([ASN_MAGIC, ASN_VERSION, v4.asns.length, v6.asns.length, encoded.length, offsets[encoded.length] ?? 0]);
  const words = (a: Uint32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
  return Buffer.concat([header, v4.starts, v4.ends, v4.asns, v4.orgs, v6.starts, v6.ends, v6.asns, v6.orgs, offsets].map(words).concat(encoded));
}
