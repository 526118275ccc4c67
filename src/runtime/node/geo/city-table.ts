// The embedded DB-IP Lite city data, compiled by the build (scripts/geo/city-compile.ts) into one
// file per IP version and read with positioned reads rather than held in memory. Both mmdb files read
// whole cost 134 MB of every process's resident memory (each cluster worker its own copy);
// read this way, the data lives in the kernel's page cache, shared by every process and given
// back under memory pressure, and a process keeps only the block index (under 1 MB).
//
// A file: a header; the first key of every block of BLOCK entries (the index, read at start);
// the fine entries (read at start, below); the entries, each a range's first address and the
// offset of its record, sorted; then the records. An IPv4 key is its one 32-bit word. An IPv6 key
// is the upper two words only: all but about 10 000 of DB-IP's 4.4 million IPv6 ranges start on a
// /64 boundary, and those few, keyed by all four words, are the fine entries (about 200 kB, held
// in memory). A range's start is the larger of the last entry at or below the address's /64 and
// the last fine entry at or below the address: the same range the four-word table gave, in 12
// bytes an entry rather than 20 (35 MB less on disk). A lookup bisects the index, reads one block
// and bisects it (and the fine entries), then reads one record: two reads from the page cache, a
// few microseconds.
// The trade: were the pages evicted, a lookup would wait on the disk, as a memory-mapped reader
// (MaxMind's libmaxminddb) would.
import { closeSync, openSync, readSync } from 'node:fs';
import type { ParsedAddress } from '../../../core/net/address.js';
import type { CityLookup, LocationInformation } from '../../../core/net/geo.js';
import { addressWords, compareWords, compiledDataPath, compiledTableError } from './compiled.js';

/** The first header word (its bytes on a little-endian machine spell "NDCY"): a file of another kind is refused. */
export const CITY_MAGIC = 0x5943444e;
/** The layout's version: a table of another layout is refused with a word to run the build. */
export const CITY_VERSION = 2;
/** Entries per block: the index holds the first key of each. */
export const BLOCK = 128;
/** A range whose addresses no record covers (the data has gaps). */
export const NO_RECORD = 0xffffffff;
/**
 * Header words: magic, version, key width in words, entries, blocks, byte offsets of index,
 * entries and records, then the fine entries' count and byte offset (each four key words and a
 * record offset; none for IPv4).
 */
export const HEADER_WORDS = 10;

/** Where the build writes the tables. */
export function cityTablePath(version: 4 | 6): string {
  return compiledDataPath(`city-ipv${String(version)}.bin`);
}

/**
 * A record: latitude and longitude (float64, NaN when absent), then city, region, country
 * code, postal code and time zone, each a 16-bit length and UTF-8 bytes (length 0: null).
 */
export type CityRecord = Omit<LocationInformation, 'country'>;
export const RECORD_TEXTS = ['city', 'region', 'country_code', 'postal_code', 'timezone'] as const;

/** Bytes read for a record at once; a longer one (none in DB-IP Lite) is read again whole. */
const RECORD_READ = 512;

interface Table {
  fd: number;
  width: number;
  entries: number;
  index: Uint32Array;
  entriesAt: number;
  recordsAt: number;
  /** Ranges that start inside a /64 (IPv6 only): four key words and a record offset each. */
  fine: Uint32Array;
  fineEntries: number;
}

/** Words of a fine entry: a full IPv6 key and its record offset. */
const FINE_STRIDE = 5;

function readExactly(fd: number, into: Buffer, length: number, position: number): Buffer {
  const got = readSync(fd, into, 0, length, position);
  return into.subarray(0, got);
}

function openTable(path: string): Table {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    throw compiledTableError('city', path, `is missing (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`);
  }
  const header = new Uint32Array(HEADER_WORDS);
  readSync(fd, header, 0, header.byteLength, 0);
  const [magic, version, width = 1, entries = 0, blocks = 0, indexAt = 0, entriesAt = 0, recordsAt = 0, fineEntries = 0, fineAt = 0] = header;
  if (magic !== CITY_MAGIC || version !== CITY_VERSION) {
    closeSync(fd);
    throw compiledTableError('city', path, 'is of another layout');
  }
  const index = new Uint32Array(blocks * width);
  readSync(fd, index, 0, index.byteLength, indexAt);
  const fine = new Uint32Array(fineEntries * FINE_STRIDE);
  if (fine.byteLength > 0) readSync(fd, fine, 0, fine.byteLength, fineAt);
  return { fd, width, entries, index, entriesAt, recordsAt, fine, fineEntries };
}

/** The last position in `0..count-1` whose key is <= `key`, or -1. */
function lastAtOrBelow(key: Uint32Array, words: Uint32Array, count: number, stride: number, width: number): number {
  let lo = 0;
  let hi = count - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (compareWords(key, words, mid * stride, width) >= 0) {
      found = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return found;
}

/**
 * Whether the fine entry at `fine[at]` starts in the /64 of the /64-keyed entry at `block[from]`
 * or after it: its upper two words at or above that entry's (its lower ones are never zero, so it
 * then starts later). Compared in place: the lookup is on /v1/ip's path and allocates nothing.
 */
function startsInOrAfter(fine: Uint32Array, at: number, block: Uint32Array, from: number): boolean {
  const high = fine[at] ?? 0;
  const other = block[from] ?? 0;
  return high !== other ? high > other : (fine[at + 1] ?? 0) >= (block[from + 1] ?? 0);
}

function decodeRecord(bytes: Buffer): CityRecord {
  const latitude = bytes.readDoubleLE(0);
  const longitude = bytes.readDoubleLE(8);
  let at = 16;
  const texts: (string | null)[] = [];
  for (let i = 0; i < RECORD_TEXTS.length; i++) {
    const length = bytes.readUInt16LE(at);
    at += 2;
    texts.push(length === 0 ? null : bytes.toString('utf8', at, at + length));
    at += length;
  }
  return {
    city: texts[0] ?? null,
    region: texts[1] ?? null,
    country_code: texts[2] ?? null,
    postal_code: texts[3] ?? null,
    timezone: texts[4] ?? null,
    latitude: Number.isNaN(latitude) ? null : latitude,
    longitude: Number.isNaN(longitude) ? null : longitude,
  };
}

/** Length in bytes of the record at the start of `bytes`, or undefined if `bytes` holds less of it. */
function recordLength(bytes: Buffer): number | undefined {
  let at = 16;
  for (let i = 0; i < RECORD_TEXTS.length; i++) {
    if (at + 2 > bytes.length) return undefined;
    at += 2 + bytes.readUInt16LE(at);
  }
  return at <= bytes.length ? at : undefined;
}

export function embeddedCityTable(paths = { v4: cityTablePath(4), v6: cityTablePath(6) }): CityLookup & { close(): void } {
  const v4 = openTable(paths.v4);
  const v6 = openTable(paths.v6);
  // One process, one thread: a lookup runs to completion, so these buffers are never shared.
  const key = new Uint32Array(4);
  const block = Buffer.alloc(BLOCK * 5 * 4);
  const blockWords = new Uint32Array(block.buffer, block.byteOffset, block.byteLength / 4);
  let record = Buffer.alloc(RECORD_READ);

  function lookup(table: Table): CityRecord | undefined {
    const { width } = table;
    const stride = width + 1;
    const b = lastAtOrBelow(key, table.index, table.index.length / width, width, width);
    if (b < 0) return undefined;
    const count = Math.min(BLOCK, table.entries - b * BLOCK);
    readExactly(table.fd, block, count * stride * 4, table.entriesAt + b * BLOCK * stride * 4);
    const e = lastAtOrBelow(key, blockWords, count, stride, width);
    let offset = e < 0 ? NO_RECORD : (blockWords[e * stride + width] ?? NO_RECORD);
    // A range that starts inside the address's /64, after the /64-aligned one found, governs.
    if (table.fineEntries > 0) {
      const f = lastAtOrBelow(key, table.fine, table.fineEntries, FINE_STRIDE, 4);
      if (f >= 0 && (e < 0 || startsInOrAfter(table.fine, f * FINE_STRIDE, blockWords, e * stride))) offset = table.fine[f * FINE_STRIDE + 4] ?? NO_RECORD;
    }
    if (offset === NO_RECORD) return undefined;
    let bytes = readExactly(table.fd, record, record.length, table.recordsAt + offset);
    let length = recordLength(bytes);
    if (length === undefined) {
      record = Buffer.alloc(record.length * 4);
      bytes = readExactly(table.fd, record, record.length, table.recordsAt + offset);
      length = recordLength(bytes);
      if (length === undefined) return undefined;
    }
    return decodeRecord(bytes.subarray(0, length));
  }

  return {
    city(address: ParsedAddress) {
      return lookup(addressWords(address, key) === 1 ? v4 : v6);
    },
    close() {
      closeSync(v4.fd);
      closeSync(v6.fd);
    },
  };
}
