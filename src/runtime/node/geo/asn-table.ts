import { readFileSync } from 'node:fs';
import { text, type AsnLookup, type NetworkInformation } from '../../../core/net/geo.js';
import { addressWords, compareWords, compiledDataPath, compiledTableError } from './compiled.js';

/**
 * The embedded ASN table (ip-location-db's RouteViews + RIR + DB-IP merge, CC BY 4.0): sorted,
 * non-overlapping ranges in typed arrays, searched by bisection. The build compiles it from the
 * CSVs (scripts/geo/asn-compile.ts) into dist/data/asn.bin, which start-up maps without parsing:
 * about 0.5 M ranges in 21 MB, each organisation name stored once as UTF-8 and decoded when asked
 * for. The layout below (magic, version, path) is the one definition the build writes by.
 */
export interface Table {
  /** Range starts and ends: one number per IPv4 range; four 32-bit words per IPv6 range. */
  starts: Uint32Array;
  ends: Uint32Array;
  width: number;
  asns: Uint32Array;
  orgs: Uint32Array;
}

/** The range holding `key` (`width` words), or -1. */
function find(table: Table, key: Uint32Array): number {
  const { width } = table;
  let lo = 0;
  let hi = table.asns.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (compareWords(key, table.starts, mid * width, width) < 0) hi = mid - 1;
    else if (compareWords(key, table.ends, mid * width, width) > 0) lo = mid + 1;
    else return mid;
  }
  return -1;
}

/**
 * For IPv4, where the first range at or above each /16 starts (65 537 entries, 256 KiB, built
 * at start-up in one pass): a lookup bisects only the ranges of its own /16 and the one before
 * it, a handful of steps instead of about nineteen over the whole table.
 */
function slashSixteenIndex(starts: Uint32Array): Uint32Array {
  const index = new Uint32Array(65_537);
  let i = 0;
  for (let prefix = 0; prefix <= 65_536; prefix++) {
    const bound = prefix * 65_536;
    while (i < starts.length && (starts[i] ?? 0) < bound) i++;
    index[prefix] = i;
  }
  return index;
}

/** The IPv4 range holding `address`, or -1: the last start at or below it, if its range reaches it. */
function find4(table: Table, index: Uint32Array, address: number): number {
  const prefix = address >>> 16;
  // The range holding the address starts in its /16 or is the last one to start before it.
  let lo = Math.max(0, (index[prefix] ?? 0) - 1);
  let hi = (index[prefix + 1] ?? 0) - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if ((table.starts[mid] ?? 0) <= address) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found >= 0 && (table.ends[found] ?? 0) >= address ? found : -1;
}

/** "NDAS": the file is this table; the version changes with its layout. */
export const ASN_MAGIC = 0x5341444e;
export const ASN_VERSION = 1;

/** Where the build writes the table. */
export const ASN_TABLE_PATH = compiledDataPath('asn.bin');

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
    throw compiledTableError('ASN', path, `is missing (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`);
  }
  const words = wordsOf(file);
  if (words[0] !== ASN_MAGIC || words[1] !== ASN_VERSION) throw compiledTableError('ASN', path, 'is of another layout');
  const [n4 = 0, n6 = 0, nNames = 0] = words.subarray(2, 5);
  let at = 6;
  const take = (n: number) => words.subarray(at, (at += n));
  const v4: Table = { width: 1, starts: take(n4), ends: take(n4), asns: take(n4), orgs: take(n4) };
  const v6: Table = { width: 4, starts: take(n6 * 4), ends: take(n6 * 4), asns: take(n6), orgs: take(n6) };
  const offsets = take(nNames + 1);
  const namesAt = at * 4;
  const name = (id: number) => file.toString('utf8', namesAt + (offsets[id] ?? 0), namesAt + (offsets[id + 1] ?? 0));
  const key = new Uint32Array(4);
  const v4Index = slashSixteenIndex(v4.starts);
  return {
    asn(address): NetworkInformation | undefined {
      let table: Table;
      let i: number;
      if (address.v4 !== undefined) {
        table = v4;
        i = find4(v4, v4Index, address.v4);
      } else {
        table = v6;
        addressWords(address, key);
        i = find(v6, key);
      }
      if (i < 0) return undefined;
      return { asn: table.asns[i] ?? null, organization: text(name(table.orgs[i] ?? 0), 160) };
    },
  };
}
