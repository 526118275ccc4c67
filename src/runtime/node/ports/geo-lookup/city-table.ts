// The embedded DB-IP Lite city data, compiled by the build (scripts/geo/city-compile.ts) into one
// file sized by what the data holds, and read with positioned reads rather than held in memory:
// read this way, the ranges and records live in the kernel's page cache, shared by every process
// (each worker thread would otherwise hold its own copy) and given back under memory pressure.
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
// - per family, the ranges in blocks (range-blocks.ts gives their layout and how a lookup reads
//   them).
// Ranges take 4-5 bytes each instead of 8 (IPv4) and 12 (IPv6) as fixed words, and a location
// 22 bytes plus shared strings instead of 40-70 repeated per data pointer: 58 MB for what took 128.
//
// A lookup bisects the directory, reads one block (at most 770 bytes) and bisects it, checks the
// fine entries (IPv6), then reads one record: two reads from the page cache, a few microseconds.
// The trade: were the pages evicted, a lookup would wait on the disk, as a memory-mapped reader
// (MaxMind's libmaxminddb) would.
import { closeSync, openSync, readSync } from 'node:fs';
import type { ParsedAddress } from '../../../../core/net/address.js';
import type { CityLookup, LocationInformation } from '../../../../core/ports/geo-lookup.js';
import { addressWords, compiledDataPath, compiledTableError } from './compiled.js';
import { FAMILY_WORDS, HEADER_WORDS, NO_RECORD, rangeFinder, readFamily, wordsAt } from './range-blocks.js';

/** The first header word (its bytes on a little-endian machine spell "NDCY"): a file of another kind is refused. */
export const CITY_MAGIC = 0x5943444e;
/** The layout's version: a table of another layout is refused with a word to run the build. */
export const CITY_VERSION = 3;
/** A string offset meaning null. */
export const NO_STRING = 0xffffff;
/** A coordinate's stored value when the data has none. */
export const NO_COORDINATE = -0x80000000;
/** Coordinates are stored as whole multiples of 1 / COORDINATE_SCALE degrees. */
export const COORDINATE_SCALE = 10_000;
/** Bytes of a record: latitude, longitude (int32), country code (2 ASCII letters), four string offsets (3 bytes each). */
export const RECORD_BYTES = 22;

/** Where the build writes the table. */
export const CITY_TABLE_PATH = compiledDataPath('city.bin');

export type CityRecord = Omit<LocationInformation, 'country'>;

export function embeddedCityTable(path = CITY_TABLE_PATH): CityLookup & { close(): void } {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    throw compiledTableError('city', path, `is missing (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`);
  }
  const header = wordsAt(fd, HEADER_WORDS + 2 * FAMILY_WORDS, 0);
  const [magic, version, stringsAt = 0, stringsBytes = 0, recordsAt = 0] = header;
  if (magic !== CITY_MAGIC || version !== CITY_VERSION) {
    closeSync(fd);
    throw compiledTableError('city', path, 'is of another layout');
  }
  const strings = Buffer.alloc(stringsBytes);
  readSync(fd, strings, 0, stringsBytes, stringsAt);
  const v4 = readFamily(fd, header, HEADER_WORDS);
  const v6 = readFamily(fd, header, HEADER_WORDS + FAMILY_WORDS);

  const find = rangeFinder(fd);
  // One process, one thread: a lookup runs to completion, so this buffer is never shared.
  const key = new Uint32Array(4);
  const record = Buffer.alloc(RECORD_BYTES);

  const text = (at: number): string | null => {
    const offset = record.readUIntLE(at, 3);
    return offset === NO_STRING ? null : strings.toString('utf8', offset + 2, offset + 2 + strings.readUInt16LE(offset));
  };
  const coordinate = (at: number): number | null => {
    const value = record.readInt32LE(at);
    return value === NO_COORDINATE ? null : value / COORDINATE_SCALE;
  };

  return {
    city(address: ParsedAddress): CityRecord | undefined {
      const n = find(addressWords(address, key) === 1 ? v4 : v6, key);
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
