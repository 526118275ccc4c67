import { readFileSync } from 'node:fs';
import { Reader, type Response } from 'maxmind';
import type { ParsedAddress } from '../../../ip/address.js';

/** An .mmdb file read once into memory and opened with MaxMind's reader. */
export interface Mmdb {
  databaseType: string;
  get(address: ParsedAddress): Record<string, unknown> | undefined;
}

/** Opens an .mmdb file; throws a plain Error (the caller names the variable) when it is not one. */
export function openMmdb(path: string): Mmdb {
  let reader: Reader<Response>;
  try {
    reader = new Reader<Response>(readFileSync(path));
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
