// What the two compiled tables (asn-table.ts, city-table.ts) share: where the build writes them,
// the error when one is missing, and addresses as big-endian 32-bit words compared in order.
import { fileURLToPath } from 'node:url';
import type { ParsedAddress } from '../../../../core/net/address.js';

/** A file the build writes in dist/data/ of the checkout or package (from src/ or dist/, four levels up). */
export function compiledDataPath(name: string): string {
  return fileURLToPath(new URL(`../../../../../dist/data/${name}`, import.meta.url));
}

/** What start-up says when a compiled table cannot be read or is of another layout. */
export function compiledTableError(what: string, path: string, cause: string): Error {
  return new Error(`the embedded ${what} table ${path} ${cause}: run npm run build`);
}

/**
 * Writes the address into `key` as 32-bit words, most significant first (one for IPv4, four for
 * IPv6) and returns how many: a scratch array, so a lookup allocates nothing for IPv4.
 */
export function addressWords(address: ParsedAddress, key: Uint32Array): number {
  if (address.v4 !== undefined) {
    key[0] = address.v4;
    return 1;
  }
  const bytes = address.addr.toByteArray();
  for (let w = 0; w < 4; w++) key[w] = (((bytes[w * 4] ?? 0) << 24) | ((bytes[w * 4 + 1] ?? 0) << 16) | ((bytes[w * 4 + 2] ?? 0) << 8) | (bytes[w * 4 + 3] ?? 0)) >>> 0;
  return 4;
}

/** -1, 0, 1 comparing the first `width` words of `key` with the `width` words of `words` from `at`. */
export function compareWords(key: Uint32Array, words: Uint32Array, at: number, width: number): number {
  for (let w = 0; w < width; w++) {
    const a = key[w] ?? 0;
    const b = words[at + w] ?? 0;
    if (a !== b) return a < b ? -1 : 1;
  }
  return 0;
}
