// Build step (scripts/compile-geo.mjs): the embedded DB-IP Lite mmdb files compiled into the
// range tables src/runtime/node/geo/city-table.ts reads (that file says why and how, and defines
// the layout both sides use). The search tree is walked in address order; consecutive networks
// with the same record become one range; each distinct record is decoded once by MaxMind's
// reader and shaped as /v1/ip gives it, its time zone filled from its coordinates.
import { readFileSync } from 'node:fs';
import ipaddr from 'ipaddr.js';
import { Reader, type Response } from 'maxmind';
import { coordinate, countryCode, text } from '../../src/core/net/geo.js';
import { BLOCK, CITY_MAGIC, CITY_VERSION, HEADER_WORDS, NO_RECORD, RECORD_TEXTS, type CityRecord } from '../../src/runtime/node/geo/city-table.js';
import { zoneAt } from './timezone.js';

/** DB-IP Lite as ip-location-db flattens it (city, state1, country_code, latitude, …), shaped as /v1/ip gives it. */
export function fromDbip(r: Record<string, unknown>): CityRecord {
  const latitude = coordinate(r.latitude, 90);
  const longitude = coordinate(r.longitude, 180);
  return {
    city: text(r.city, 100),
    region: text(r.state1, 100),
    country_code: countryCode(r.country_code),
    // DB-IP Lite has no postal codes; none is made up.
    postal_code: text(r.postcode, 32),
    // Nor a time zone: the zone at its coordinates (approximate, as they are).
    timezone: text(r.timezone, 64) ?? zoneAt(latitude, longitude),
    latitude,
    longitude,
  };
}

/** One record pointer of a node: left (0) or right (1), for the record sizes mmdb allows (24, 28, 32 bits). */
function pointerReader(tree: Buffer, recordSize: number): (node: number, right: number) => number {
  const nodeBytes = (recordSize * 2) / 8;
  switch (recordSize) {
    case 24:
      return (node, right) => tree.readUIntBE(node * nodeBytes + right * 3, 3);
    case 28:
      return (node, right) => {
        const at = node * nodeBytes;
        const middle = tree[at + 3] ?? 0;
        return right === 0 ? ((middle & 0xf0) << 20) + tree.readUIntBE(at, 3) : ((middle & 0x0f) << 24) + tree.readUIntBE(at + 4, 3);
      };
    case 32:
      return (node, right) => tree.readUInt32BE(node * nodeBytes + right * 4);
    default:
      throw new Error(`unsupported mmdb record size ${String(recordSize)}`);
  }
}

export function encodeRecord(record: CityRecord): Buffer {
  const coordinates = Buffer.alloc(16);
  coordinates.writeDoubleLE(record.latitude ?? NaN, 0);
  coordinates.writeDoubleLE(record.longitude ?? NaN, 8);
  const parts = [coordinates];
  for (const field of RECORD_TEXTS) {
    const text = Buffer.from(record[field] ?? '', 'utf8');
    const length = Buffer.alloc(2);
    length.writeUInt16LE(text.length, 0);
    parts.push(length, text);
  }
  return Buffer.concat(parts);
}

/** Compiles one DB-IP mmdb file (IPv4 or IPv6) into a city table. */
export function compileCity(mmdbPath: string): Buffer {
  const file = readFileSync(mmdbPath);
  const reader = new Reader<Response>(file);
  const { nodeCount, recordSize, ipVersion } = reader.metadata;
  const width = ipVersion === 4 ? 1 : 4;
  const pointer = pointerReader(file, recordSize);

  let keys = new Uint32Array(1 << 20);
  let targets = new Uint32Array((1 << 20) / width);
  let entries = 0;
  /** Record pointer → offset of its encoded record. */
  const offsets = new Map<number, number>();
  const records: Buffer[] = [];
  let recordBytes = 0;
  const start = new Uint32Array(width);

  const textOf = (words: Uint32Array) => {
    const bytes: number[] = [];
    for (const word of words) bytes.push(word >>> 24, (word >>> 16) & 0xff, (word >>> 8) & 0xff, word & 0xff);
    return ipaddr.fromByteArray(bytes).toString();
  };

  const recordAt = (target: number): number => {
    // The tree's own "no data" pointer.
    if (target === nodeCount) return NO_RECORD;
    let offset = offsets.get(target);
    if (offset === undefined) {
      // Decoded through the reader at the first address that reaches it: this one.
      const raw = reader.get(textOf(start)) as Record<string, unknown> | null;
      offset = raw === null ? NO_RECORD : recordBytes;
      if (raw !== null) {
        const encoded = encodeRecord(fromDbip(raw));
        records.push(encoded);
        recordBytes += encoded.length;
      }
      offsets.set(target, offset);
    }
    return offset;
  };

  const append = (offset: number) => {
    if (entries === targets.length) {
      const grownKeys = new Uint32Array(keys.length * 2);
      grownKeys.set(keys);
      keys = grownKeys;
      const grownTargets = new Uint32Array(targets.length * 2);
      grownTargets.set(targets);
      targets = grownTargets;
    }
    keys.set(start, entries * width);
    targets[entries] = offset;
    entries += 1;
  };

  let last = -1;
  const walk = (node: number, depth: number): void => {
    const word = depth >>> 5;
    const bit = 31 - (depth & 31);
    // Bits above this one are the path so far; this one is the branch; those below start at 0.
    const above = bit === 31 ? 0 : ((start[word] ?? 0) >>> (bit + 1)) << (bit + 1);
    for (let right = 0; right < 2; right++) {
      start[word] = (above | (right << bit)) >>> 0;
      for (let w = word + 1; w < width; w++) start[w] = 0;
      const next = pointer(node, right);
      if (next < nodeCount) {
        walk(next, depth + 1);
        continue;
      }
      const offset = recordAt(next);
      if (offset === last) continue;
      append(offset);
      last = offset;
    }
  };
  walk(0, 0);

  // IPv6: nearly every range starts on a /64 boundary (all but about 10 000 of 4.4 million), so the
  // main table keys them by their upper 64 bits (two words, not four), and the few that start
  // inside a /64 go to a small table of full keys (city-table.ts says how a lookup joins them).
  const fullWidth = width;
  const keyWidth = fullWidth === 4 ? 2 : fullWidth;
  const coarse: number[] = [];
  const fine: number[] = [];
  for (let e = 0; e < entries; e++) {
    const at = e * fullWidth;
    if (fullWidth === 4 && ((keys[at + 2] ?? 0) !== 0 || (keys[at + 3] ?? 0) !== 0)) fine.push(e);
    else coarse.push(e);
  }
  const stride = keyWidth + 1;
  const blocks = Math.ceil(coarse.length / BLOCK);
  const index = new Uint32Array(blocks * keyWidth);
  const table = new Uint32Array(coarse.length * stride);
  coarse.forEach((e, i) => {
    table.set(keys.subarray(e * fullWidth, e * fullWidth + keyWidth), i * stride);
    table[i * stride + keyWidth] = targets[e] ?? NO_RECORD;
    if (i % BLOCK === 0) index.set(keys.subarray(e * fullWidth, e * fullWidth + keyWidth), (i / BLOCK) * keyWidth);
  });
  const fineTable = new Uint32Array(fine.length * (fullWidth + 1));
  fine.forEach((e, i) => {
    fineTable.set(keys.subarray(e * fullWidth, e * fullWidth + fullWidth), i * (fullWidth + 1));
    fineTable[i * (fullWidth + 1) + fullWidth] = targets[e] ?? NO_RECORD;
  });
  const indexAt = HEADER_WORDS * 4;
  const fineAt = indexAt + index.byteLength;
  const entriesAt = fineAt + fineTable.byteLength;
  const recordsAt = entriesAt + table.byteLength;
  const header = new Uint32Array([CITY_MAGIC, CITY_VERSION, keyWidth, coarse.length, blocks, indexAt, entriesAt, recordsAt, fine.length, fineAt]);
  const bytes = (a: Uint32Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
  return Buffer.concat([bytes(header), bytes(index), bytes(fineTable), bytes(table), ...records]);
}
