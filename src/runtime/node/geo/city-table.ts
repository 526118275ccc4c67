// The embedded DB-IP Lite city data, compiled by the build (scripts/geo/city-compile.ts) into one
// file sized by what the data holds, and read with positioned reads rather than held in memory:
// read this way, the ranges and records live in the kernel's page cache, shared by every process
// (each cluster worker would otherwise hold its own copy) and given back under memory pressure.
// A process holds only the block directories, the few IPv6 ranges that start inside a /64 and the
// strings: about 4 MB, in the form the file stores them.
//
// The file (every number little-endian, every section 4-byte aligned):
// - a header of HEADER_WORDS words: magic, version, the strings' and the records' places, then
//   FAMILY_WORDS for each family (IPv4, then IPv6);
// - the strings: each distinct text once (174 000 city names, 3 800 regions, 400 time zones), a
//   16-bit byte length and UTF-8;
// - the records: each distinct location once for both families (565 000), RECORD_BYTES each:
//   latitude and longitude in ten-thousandths of a degree (the data has four decimals; the build
//   refuses any more), the country code's two letters, and the string offsets of city, region,
//   postal code and time zone (NO_STRING: null);
// - per family, the ranges, sorted by first address, in blocks of BLOCK. An IPv4 key is its one
//   32-bit word; an IPv6 key is its upper 64 bits only: all but about 10 000 of DB-IP's 4.4
//   million IPv6 ranges start on a /64 boundary, and those few, keyed by all four words, are the
//   family's fine entries (held in memory). A block starts with its key width in bytes and its
//   dictionary (the distinct records its ranges point at, 3 bytes each), then each range: its key
//   less the block's first key, in that many bytes, and one byte choosing from the dictionary. The
//   directory (each block's first key and byte offset) is held in memory.
// Ranges take 4-5 bytes each instead of 8 (IPv4) and 12 (IPv6) as fixed words, and a location
// 22 bytes plus shared strings instead of 40-70 repeated per data pointer: 61 MB for what took 128.
//
// A lookup bisects the directory, reads one block (at most 770 bytes) and bisects it, checks the
// fine entries (IPv6), then reads one record: two reads from the page cache, a few microseconds.
// The trade: were the pages evicted, a lookup would wait on the disk, as a memory-mapped reader
// (MaxMind's libmaxminddb) would.
import { closeSync, openSync, readSync } from 'node:fs';
import type { ParsedAddress } from '../../../core/net/address.js';
import type { CityLookup, LocationInformation } from '../../../core/net/geo.js';
import { addressWords, compareWords, compiledDataPath, compiledTableError } from './compiled.js';

/** The first header word (its bytes on a little-endian machine spell "NDCY"): a file of another kind is refused. */
export const CITY_MAGIC = 0x5943444e;
/** The layout's version: a table of another layout is refused with a word to run the build. */
export const CITY_VERSION = 3;
/** Ranges per block: the directory holds the first key of each. */
export const BLOCK = 64;
/** A record number meaning "no location" (the data has gaps); also the dictionary's 3-byte form of it. */
export const NO_RECORD = 0xffffff;
/** A string offset meaning null. */
export const NO_STRING = 0xffffff;
/** A coordinate's stored value when the data has none. */
export const NO_COORDINATE = -0x80000000;
/** Coordinates are stored as whole multiples of 1 / COORDINATE_SCALE degrees. */
export const COORDINATE_SCALE = 10_000;
/** Bytes of a record: latitude, longitude (int32), country code (2 ASCII letters), four string offsets (3 bytes each). */
export const RECORD_BYTES = 22;
/** Header words before the families: magic, version, strings' byte offset and length, records' byte offset and count. */
export const HEADER_WORDS = 6;
/**
 * Words of a family in the header: key width in words (1 or 2), ranges in blocks, blocks, byte
 * offsets of the directory's keys, its block offsets (blocks + 1 of them, relative to the blocks)
 * and the blocks, then the fine entries' count and byte offset (each four key words and a record
 * number; none for IPv4).
 */
export const FAMILY_WORDS = 8;
/** Words of a fine entry: a full IPv6 key and its record number. */
export const FINE_STRIDE = 5;

/** Where the build writes the table. */
export const CITY_TABLE_PATH = compiledDataPath('city.bin');

export type CityRecord = Omit<LocationInformation, 'country'>;

interface Family {
  /** Key width in words: 1 (IPv4) or 2 (IPv6's upper 64 bits). */
  width: number;
  ranges: number;
  keys: Uint32Array;
  offsets: Uint32Array;
  blocksAt: number;
  /** Ranges that start inside a /64 (IPv6 only): four key words and a record number each. */
  fine: Uint32Array;
  fineEntries: number;
}

function words(fd: number, count: number, position: number): Uint32Array {
  const out = new Uint32Array(count);
  if (count > 0) readSync(fd, out, 0, out.byteLength, position);
  return out;
}

function openFamily(fd: number, header: Uint32Array, at: number): Family {
  const [width = 1, ranges = 0, blocks = 0, keysAt = 0, offsetsAt = 0, blocksAt = 0, fineEntries = 0, fineAt = 0] = header.subarray(at, at + FAMILY_WORDS);
  return {
    width,
    ranges,
    keys: words(fd, blocks * width, keysAt),
    offsets: words(fd, blocks + 1, offsetsAt),
    blocksAt,
    fine: words(fd, fineEntries * FINE_STRIDE, fineAt),
    fineEntries,
  };
}

/** The last position in `0..count-1` whose key is <= `key`, or -1. */
function lastAtOrBelow(key: Uint32Array, table: Uint32Array, count: number, stride: number, width: number): number {
  let lo = 0;
  let hi = count - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (compareWords(key, table, mid * stride, width) >= 0) {
      found = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return found;
}

const TWO_32 = 0x1_0000_0000;

export function embeddedCityTable(path = CITY_TABLE_PATH): CityLookup & { close(): void } {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    throw compiledTableError('city', path, `is missing (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`);
  }
  const header = words(fd, HEADER_WORDS + 2 * FAMILY_WORDS, 0);
  const [magic, version, stringsAt = 0, stringsBytes = 0, recordsAt = 0] = header;
  if (magic !== CITY_MAGIC || version !== CITY_VERSION) {
    closeSync(fd);
    throw compiledTableError('city', path, 'is of another layout');
  }
  const strings = Buffer.alloc(stringsBytes);
  readSync(fd, strings, 0, stringsBytes, stringsAt);
  const v4 = openFamily(fd, header, HEADER_WORDS);
  const v6 = openFamily(fd, header, HEADER_WORDS + FAMILY_WORDS);

  // One process, one thread: a lookup runs to completion, so these buffers are never shared.
  const key = new Uint32Array(4);
  const block = Buffer.alloc(2 + BLOCK * 3 + BLOCK * 9);
  const record = Buffer.alloc(RECORD_BYTES);

  const text = (at: number): string | null => {
    const offset = record.readUIntLE(at, 3);
    return offset === NO_STRING ? null : strings.toString('utf8', offset + 2, offset + 2 + strings.readUInt16LE(offset));
  };
  const coordinate = (at: number): number | null => {
    const value = record.readInt32LE(at);
    return value === NO_COORDINATE ? null : value / COORDINATE_SCALE;
  };

  /** The record number of the range holding the address in `key`, or NO_RECORD. */
  function find(family: Family): number {
    const { width } = family;
    let found = NO_RECORD;
    // The range's own upper 64 bits (IPv6), for the fine entries below.
    let rangeHigh = -1;
    let rangeLow = 0;
    const b = lastAtOrBelow(key, family.keys, family.keys.length / width, width, width);
    if (b >= 0) {
      const start = family.offsets[b] ?? 0;
      readSync(fd, block, 0, (family.offsets[b + 1] ?? 0) - start, family.blocksAt + start);
      const keyBytes = block[0] ?? 0;
      const stride = keyBytes + 1;
      const rangesAt = 2 + (block[1] ?? 0) * 3;
      const count = Math.min(BLOCK, family.ranges - b * BLOCK);
      // The address less the block's first key, as a high and a low 32-bit part (IPv4: low only).
      const baseHigh = width === 2 ? (family.keys[b * 2] ?? 0) : 0;
      const baseLow = family.keys[b * width + width - 1] ?? 0;
      let low = (width === 2 ? (key[1] ?? 0) : (key[0] ?? 0)) - baseLow;
      let high = width === 2 ? (key[0] ?? 0) - baseHigh : 0;
      if (low < 0) {
        low += TWO_32;
        high -= 1;
      }
      const lowBytes = Math.min(keyBytes, 4);
      // The first range of the block starts at its key (offset 0), at or below the address.
      let lo = 1;
      let hi = count - 1;
      let e = 0;
      let eHigh = 0;
      let eLow = 0;
      while (lo <= hi) {
        const mid = (lo + hi) >>> 1;
        const at = rangesAt + mid * stride;
        const midLow = lowBytes === 0 ? 0 : block.readUIntLE(at, lowBytes);
        const midHigh = keyBytes > 4 ? block.readUIntLE(at + 4, keyBytes - 4) : 0;
        if (midHigh < high || (midHigh === high && midLow <= low)) {
          e = mid;
          eHigh = midHigh;
          eLow = midLow;
          lo = mid + 1;
        } else {
          hi = mid - 1;
        }
      }
      const choice = block[rangesAt + e * stride + keyBytes] ?? 0;
      found = block.readUIntLE(2 + choice * 3, 3);
      rangeLow = baseLow + eLow;
      rangeHigh = baseHigh + eHigh + (rangeLow >= TWO_32 ? 1 : 0);
      rangeLow %= TWO_32;
    }
    // A range that starts inside the address's /64, at or after the /64-aligned one found, governs:
    // its upper 64 bits at or above that range's (its lower ones are never zero, so it starts later).
    if (family.fineEntries > 0) {
      const f = lastAtOrBelow(key, family.fine, family.fineEntries, FINE_STRIDE, 4);
      if (f >= 0) {
        const fHigh = family.fine[f * FINE_STRIDE] ?? 0;
        const fLow = family.fine[f * FINE_STRIDE + 1] ?? 0;
        if (fHigh > rangeHigh || (fHigh === rangeHigh && fLow >= rangeLow)) found = family.fine[f * FINE_STRIDE + 4] ?? NO_RECORD;
      }
    }
    return found;
  }

  return {
    city(address: ParsedAddress): CityRecord | undefined {
      const n = find(addressWords(address, key) === 1 ? v4 : v6);
      if (n === NO_RECORD) return undefined;
      readSync(fd, record, 0, RECORD_BYTES, recordsAt + n * RECORD_BYTES);
      const country = record.readUInt16LE(8);
      // In the order the build shapes a record (scripts/geo/city-compile.ts fromDbip).
      return {
        city: text(10),
        region: text(13),
        country_code: country === 0 ? null : record.toString('latin1', 8, 10),
        postal_code: text(16),
        timezone: text(19),
        latitude: coordinate(0),
        longitude: coordinate(4),
      };
    },
    close() {
      closeSync(fd);
    },
  };
}
