import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ParsedAddress } from '../../../ip/address.js';
import { text, type AsnLookup, type NetworkInformation } from '../../../ip/geo.js';

/**
 * The embedded ASN table (ip-location-db's RouteViews + RIR + DB-IP merge, CC BY 4.0): sorted,
 * non-overlapping ranges in typed arrays, searched by bisection. The build compiles it from the
 * CSVs (asn-compile.ts) into dist/data/asn.bin, which start-up maps without parsing: about
 * 0.5 M ranges in 21 MB, each organisation name stored once as UTF-8 and decoded when asked for.
 */
export interface Table {
  /** Range starts and ends: one number per IPv4 range; four 32-bit words per IPv6 range. */
  starts: Uint32Array;
  ends: Uint32Array;
  width: number;
  asns: Uint32Array;
  orgs: Uint32Array;
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

/** "NDAS": the file is this table; the version changes with its layout. */
export const ASN_MAGIC = 0x5341444e;
export const ASN_VERSION = 1;

/** Where the build writes the table: dist/data/ of the checkout or package (from src/ or dist/, four levels up). */
export const ASN_TABLE_PATH = fileURLToPath(new URL('../../../../dist/data/asn.bin', import.meta.url));

/** The table's words, in this machine's byte order (the build ran here or on its like). */
function wordsOf(file: Buffer): Uint32Array {
  // A typed array over a Buffer needs 4-byte alignment; a large file's Buffer starts at 0, but copy if not.
  const aligned = file.byteOffset % 4 === 0 ? file : Buffer.from(file);
  return new Uint32Array(aligned.buffer, aligned.byteOffset, Math.floor(aligned.byteLength / 4));
}

export function embeddedAsn(path = ASN_TABLE_PATH): AsnLookup {
  let file: Buffer;
  try {
    file = readFileSync(path);
  } catch (err) {
    throw new Error(`the embedded ASN table ${path} is missing (${(err as NodeJS.ErrnoException).code ?? 'unreadable'}): run npm run build`);
  }
  const words = wordsOf(file);
  if (words[0] !== ASN_MAGIC || words[1] !== ASN_VERSION) throw new Error(`${path} is not an ASN table of this version: run npm run build`);
  const [n4 = 0, n6 = 0, nNames = 0] = words.subarray(2, 5);
  let at = 6;
  const take = (n: number) => words.subarray(at, (at += n));
  const v4: Table = { width: 1, starts: take(n4), ends: take(n4), asns: take(n4), orgs: take(n4) };
  const v6: Table = { width: 4, starts: take(n6 * 4), ends: take(n6 * 4), asns: take(n6), orgs: take(n6) };
  const offsets = take(nNames + 1);
  const namesAt = at * 4;
  const name = (id: number) => file.toString('utf8', namesAt + (offsets[id] ?? 0), namesAt + (offsets[id + 1] ?? 0));
  return {
    asn(address): NetworkInformation | undefined {
      const table = address.version === 'ipv4' ? v4 : v6;
      const i = find(table, keyOf(address));
      if (i < 0) return undefined;
      return { asn: table.asns[i] ?? null, organization: text(name(table.orgs[i] ?? 0), 160) };
    },
  };
}
