import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { ParsedAddress } from '../../../ip/address.js';
import { text, type AsnLookup, type NetworkInformation } from '../../../ip/geo.js';

/**
 * The embedded ASN table (ip-location-db's RouteViews + RIR + DB-IP merge, CC BY 4.0): sorted,
 * non-overlapping ranges read once into typed arrays and searched by bisection. Organisation
 * names are stored once each. About 0.5 M ranges cost about 11 MB.
 */
interface Table {
  /** Range starts and ends: one number per IPv4 range; four 32-bit words per IPv6 range. */
  starts: Uint32Array;
  ends: Uint32Array;
  width: number;
  asns: Uint32Array;
  orgs: Uint32Array;
}

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

/** -1, 0, 1 comparing the key with the range bound at `i` (both `width` words, most significant first). */
function compare(key: number[], bounds: Uint32Array, i: number, width: number): number {
  for (let w = 0; w < width; w++) {
    const b = bounds[i * width + w] ?? 0;
    const k = key[w] ?? 0;
    if (k !== b) return k < b ? -1 : 1;
  }
  return 0;
}

function find(table: Table, key: number[]): number {
  let lo = 0;
  let hi = table.asns.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (compare(key, table.starts, mid, table.width) < 0) hi = mid - 1;
    else if (compare(key, table.ends, mid, table.width) > 0) lo = mid + 1;
    else return mid;
  }
  return -1;
}

function keyOf(address: ParsedAddress): number[] {
  if (address.v4 !== undefined) return [address.v4];
  const bytes = (address.addr).toByteArray();
  const out: number[] = [];
  for (let i = 0; i < bytes.length; i += 4) {
    out.push((((bytes[i] ?? 0) << 24) | ((bytes[i + 1] ?? 0) << 16) | ((bytes[i + 2] ?? 0) << 8) | (bytes[i + 3] ?? 0)) >>> 0);
  }
  return out;
}

export function embeddedAsn(): AsnLookup {
  const require = createRequire(import.meta.url);
  const names: string[] = [];
  const index = new Map<string, number>();
  const v4 = loadTable(require.resolve('@ip-location-db/asn/asn-ipv4-num.csv'), 1, names, index);
  const v6 = loadTable(require.resolve('@ip-location-db/asn/asn-ipv6-num.csv'), 4, names, index);
  return {
    asn(address): NetworkInformation | undefined {
      const table = address.version === 'ipv4' ? v4 : v6;
      const i = find(table, keyOf(address));
      if (i < 0) return undefined;
      return { asn: table.asns[i] ?? null, organization: text(names[table.orgs[i] ?? 0], 160) };
    },
  };
}
