import { readFileSync } from 'node:fs';
import { Reader, type Response } from 'maxmind';
import { lru } from 'tiny-lru';
import type { ParsedAddress } from '../../../../core/net/address.js';

/** An .mmdb file read once into memory and opened with MaxMind's reader. */
interface Mmdb {
  databaseType: string;
  get(address: ParsedAddress): Record<string, unknown> | undefined;
}

/**
 * Decoded records kept, as `maxmind.open()` itself keeps them by default (an LRU of 10 000).
 * Keys are offsets into the file's data section, so an entry is a database row (a city, a
 * network) shared by every address in its range, never an address. Decoding a City record is
 * some twenty small UTF-8 reads and costs more than the rest of /v1/ip put together.
 */
const DECODED_RECORDS_KEPT = 10_000;

/** Opens an .mmdb file; throws a plain Error (the caller names the variable) when it is not one. */
export function openMmdb(path: string): Mmdb {
  let reader: Reader<Response>;
  try {
    reader = new Reader<Response>(readFileSync(path), { cache: lru(DECODED_RECORDS_KEPT) });
  } catch (err) {
    throw new Error(`"${path}" is not a valid MaxMind database (${(err as Error).message})`);
  }
  const ipv4Only = reader.metadata.ipVersion === 4;
  return {
    databaseType: reader.metadata.databaseType,
    get(address) {
      if (ipv4Only && address.version === 'ipv6') return undefined;
      try {
        return (reader.get(address.text) ?? undefined) as Record<string, unknown> | undefined;
      } catch {
        // A corrupt region of a file that opened: no data rather than a failed request.
        return undefined;
      }
    },
  };
}
