// The embedded ASN table (ip-location-db's RouteViews + RIR + DB-IP merge, CC BY 4.0), compiled by
// the build (scripts/geo/asn-compile.ts) into dist/data/asn.bin and read like the city table:
// ranges in blocks read with one positioned read (range-blocks.ts), so they live in the page cache,
// shared by every process, not in each one's memory. A process holds the block directories, the
// records (each distinct AS number and organisation, 8 bytes) and the organisation names, each
// stored once as UTF-8 and decoded when asked for: about 3 MB, where reading the whole table held
// 13 MB in every process.
//
// The file: a header of HEADER_WORDS words (magic, version, the names' and the records' places),
// then FAMILY_WORDS for each family (IPv4, then IPv6); the names, each a 16-bit byte length and
// UTF-8; the records, an AS number and a name's offset each; then each family's ranges. Where the
// source data has no range, a range points at NO_RECORD.
import { closeSync, openSync, readSync } from 'node:fs';
import { text, type AsnLookup, type NetworkInformation } from '../../../../core/ports/geo-lookup.js';
import { addressWords, compiledDataPath, compiledTableError } from './compiled.js';
import { FAMILY_WORDS, HEADER_WORDS, NO_RECORD, rangeFinder, readFamily, wordsAt } from './range-blocks.js';

/** "NDAS": the file is this table; the version changes with its layout. */
export const ASN_MAGIC = 0x5341444e;
export const ASN_VERSION = 2;
/** Words of a record: the AS number and the byte offset of its organisation's name. */
export const ASN_RECORD_WORDS = 2;

/** Where the build writes the table. */
export const ASN_TABLE_PATH = compiledDataPath('asn.bin');

export function embeddedAsn(path = ASN_TABLE_PATH): AsnLookup & { close(): void } {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    throw compiledTableError('ASN', path, `is missing (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`);
  }
  const header = wordsAt(fd, HEADER_WORDS + 2 * FAMILY_WORDS, 0);
  const [magic, version, namesAt = 0, namesBytes = 0, recordsAt = 0, recordCount = 0] = header;
  if (magic !== ASN_MAGIC || version !== ASN_VERSION) {
    closeSync(fd);
    throw compiledTableError('ASN', path, 'is of another layout');
  }
  const names = Buffer.alloc(namesBytes);
  readSync(fd, names, 0, namesBytes, namesAt);
  const records = wordsAt(fd, recordCount * ASN_RECORD_WORDS, recordsAt);
  const v4 = readFamily(fd, header, HEADER_WORDS);
  const v6 = readFamily(fd, header, HEADER_WORDS + FAMILY_WORDS);
  const find = rangeFinder(fd);
  // One process, one thread: a lookup runs to completion, so this scratch key is never shared.
  const key = new Uint32Array(4);
  return {
    asn(address): NetworkInformation | undefined {
      const n = find(addressWords(address, key) === 1 ? v4 : v6, key);
      if (n === NO_RECORD) return undefined;
      const name = records[n * ASN_RECORD_WORDS + 1] ?? 0;
      return { asn: records[n * ASN_RECORD_WORDS] ?? null, organization: text(names.toString('utf8', name + 2, name + 2 + names.readUInt16LE(name)), 160) };
    },
    close() {
      closeSync(fd);
    },
  };
}
