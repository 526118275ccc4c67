// What the two compiled geo tables (city-table.ts, asn-table.ts) store their ranges in, and how a
// lookup reads them: a family's ranges sorted by first address, each pointing at a record number,
// in blocks of BLOCK read with one positioned read. The build side is scripts/geo/range-encode.ts.
//
// An IPv4 key is its one 32-bit word; an IPv6 key is its upper 64 bits only: nearly every range of
// both data sets starts on a /64 boundary (all but about 10 000 of DB-IP's 4.4 million city ranges),
// and those few, keyed by all four words, are the family's fine entries (held in memory). A block
// starts with its key width in bytes and its dictionary (the distinct records its ranges point at,
// 3 bytes each), then each range: its key less the block's first key, in that many bytes, and one
// byte choosing from the dictionary. The directory (each block's first key and byte offset) is held
// in memory. A range the data does not cover is a range pointing at NO_RECORD.
import { readSync } from 'node:fs';
import { compareWords } from './compiled.js';

/**
 * Header words of a geo table before its families: magic, version, the texts' byte offset and
 * length, the records' byte offset and count (city-table.ts and asn-table.ts say what each holds).
 */
export const HEADER_WORDS = 6;
/** Ranges per block: the directory holds the first key of each. */
export const BLOCK = 64;
/** A record number meaning "no record here" (the data has gaps); also the dictionary's 3-byte form of it. */
export const NO_RECORD = 0xffffff;
/**
 * Words of a family in a table's header: key width in words (1 or 2), ranges in blocks, blocks,
 * byte offsets of the directory's keys, its block offsets (blocks + 1 of them, relative to the
 * blocks) and the blocks, then the fine entries' count and byte offset (each four key words and a
 * record number; none for IPv4).
 */
export const FAMILY_WORDS = 8;
/** Words of a fine entry: a full IPv6 key and its record number. */
export const FINE_STRIDE = 5;

interface RangeFamily {
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

/** `count` 32-bit words of the file at `position`, in this machine's byte order (the build ran on its like). */
export function wordsAt(fd: number, count: number, position: number): Uint32Array {
  const out = new Uint32Array(count);
  if (count > 0) readSync(fd, out, 0, out.byteLength, position);
  return out;
}

/** The family whose FAMILY_WORDS start at `header[at]`: its directory and fine entries read into memory. */
export function readFamily(fd: number, header: Uint32Array, at: number): RangeFamily {
  const [width = 1, ranges = 0, blocks = 0, keysAt = 0, offsetsAt = 0, blocksAt = 0, fineEntries = 0, fineAt = 0] = header.subarray(at, at + FAMILY_WORDS);
  return {
    width,
    ranges,
    keys: wordsAt(fd, blocks * width, keysAt),
    offsets: wordsAt(fd, blocks + 1, offsetsAt),
    blocksAt,
    fine: wordsAt(fd, fineEntries * FINE_STRIDE, fineAt),
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

/**
 * Finds record numbers in one file's families. One process, one thread: a lookup runs to
 * completion, so its block buffer is never shared, and a lookup allocates nothing.
 */
export function rangeFinder(fd: number): (family: RangeFamily, key: Uint32Array) => number {
  const block = Buffer.alloc(2 + BLOCK * 3 + BLOCK * 9);
  /** The record number of the range holding the address in `key` (1 or 4 words), or NO_RECORD. */
  return (family, key) => {
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
  };
}
