import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { ParsedAddress } from '../../../ip/address.js';
import { text, type AsnLookup, type NetworkInformation } from '../../../ip/geo.js';

/**
 * The embedded ASN table (ip-location-db's RouteViews + RIR + DB-IP merge, CC BY 4.0): sorted,
 * non-overlapping ranges read once into typed arrays and searched by bisection. Organisation
 * names are stored once each. About 0.5 M ranges cost some 12 MB.
 */
interface Table {
  /** Range starts and ends: one number per IPv4 range; four 32-bit words per IPv6 range. */
  starts: Uint32Array;
  ends: Uint32Array;
  width: number;
  asns: Uint32Array;
  orgs: Uint32Array;
}

/** Splits one CSV line of `start,end,asn,org` where only org may be quoted. */
function fields(line: string): [string, string, string, string] | undefined {
  const a = line.indexOf(',');
  const b = line.indexOf(',', a + 1);
  const c = line.indexOf(',', b + 1);
  if (a < 0 || b < 0 || c < 0) return undefined;
  let org = line.slice(c + 1);
  if (org.startsWith('"') && org.endsWith('"')) org = org.slice(1, -1).replaceAll('""', '"');
  return [line.slice(0, a), line.slice(a + 1, b), line.slice(b + 1, c), org];
}

function words(value: bigint, width: number): number[] {
  const out: number[] = [];
  for (let i = width - 1; i >= 0; i--) out.push(Number((value >> BigInt(32 * i)) & 0xffffffffn));
  return out;
}

function loadTable(path: string, width: number, names: string[], index: Map<string, number>): Table {
  const lines = readFileSync(path, 'utf8').split('\n').filter((l) => l !== '');
  const starts = new Uint32Array(lines.length * width);
  const ends = new Uint32Array(lines.length * width);
  const asns = new Uint32Array(lines.length);
  const orgs = new Uint32Array(lines.length);
  let n = 0;
  for (const line of lines) {
    const f = fields(line);
    if (f === undefined) continue;
    starts.set(words(BigInt(f[0]), width), n * width);
    ends.set(words(BigInt(f[1]), width), n * width);
    asns[n] = Number(f[2]);
    let id = index.get(f[3]);
    if (id === undefined) {
      id = names.length;
      names.push(f[3]);
      index.set(f[3], id);
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
