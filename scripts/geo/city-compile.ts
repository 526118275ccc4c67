// Build step (scripts/compile-geo.mjs): the embedded DB-IP Lite mmdb files (IPv4 and IPv6)
// compiled into the one table src/runtime/node/ports/geo-lookup/city-table.ts reads (that file says why and
// how, and defines the layout both sides use). Each search tree is walked in address order;
// consecutive networks with the same record become one range; each data record is decoded once by
// MaxMind's reader at the first address that reaches it and shaped as /v1/ip gives it, its time
// zone filled from its coordinates; locations alike in every field are stored once for both
// families, and each text once.
import { readFileSync } from 'node:fs';
import ipaddr from 'ipaddr.js';
import { Reader, type Response } from 'maxmind';
import { coordinate, countryCode, text } from '../../src/core/ports/geo-lookup.js';
import { CITY_MAGIC, CITY_VERSION, COORDINATE_SCALE, NO_COORDINATE, NO_STRING, RECORD_BYTES, type CityRecord } from '../../src/runtime/node/ports/geo-lookup/city-table.js';
import { NO_RECORD } from '../../src/runtime/node/ports/geo-lookup/range-blocks.js';
import { layTable, TextTable, type Ranges } from './range-encode.js';
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

/** Each distinct location once, each distinct text once: what both families' ranges point at. */
export class Locations {
  private readonly strings = new TextTable(NO_STRING, 'city data');
  private readonly numbers = new Map<string, number>();
  private readonly records: Buffer[] = [];

  /** The record number of `record`, storing it if it is new. */
  add(record: CityRecord): number {
    const bytes = Buffer.alloc(RECORD_BYTES);
    bytes.writeInt32LE(this.coordinate(record.latitude), 0);
    bytes.writeInt32LE(this.coordinate(record.longitude), 4);
    if (record.country_code !== null) {
      if (!/^[A-Z]{2}$/.test(record.country_code)) throw new Error(`city data: country code ${record.country_code} is not two letters`);
      bytes.write(record.country_code, 8, 'latin1');
    }
    bytes.writeUIntLE(this.text(record.city), 10, 3);
    bytes.writeUIntLE(this.text(record.region), 13, 3);
    bytes.writeUIntLE(this.text(record.postal_code), 16, 3);
    bytes.writeUIntLE(this.text(record.timezone), 19, 3);
    const identity = bytes.toString('latin1');
    let n = this.numbers.get(identity);
    if (n === undefined) {
      n = this.records.length;
      if (n >= NO_RECORD) throw new Error('city data: more locations than a 3-byte record number holds');
      this.numbers.set(identity, n);
      this.records.push(bytes);
    }
    return n;
  }

  /** Ten-thousandths of a degree, refused if that would change the value the data gives. */
  private coordinate(value: number | null): number {
    if (value === null) return NO_COORDINATE;
    const stored = Math.round(value * COORDINATE_SCALE);
    if (!Object.is(stored / COORDINATE_SCALE, value)) throw new Error(`city data: coordinate ${String(value)} has more decimals than the table's layout keeps`);
    return stored;
  }

  private text(value: string | null): number {
    return value === null ? NO_STRING : this.strings.add(value);
  }

  stringsSection(): Buffer {
    return this.strings.section();
  }

  recordsSection(): Buffer {
    return Buffer.concat(this.records);
  }
}

/** Walks one DB-IP mmdb file's search tree into its ranges. */
export function walkCity(mmdbPath: string, locations: Locations): Ranges {
  const file = readFileSync(mmdbPath);
  const reader = new Reader<Response>(file);
  const { nodeCount, recordSize, ipVersion } = reader.metadata;
  const width = ipVersion === 4 ? 1 : 4;
  const pointer = pointerReader(file, recordSize);

  let keys = new Uint32Array(1 << 20);
  let numbers = new Uint32Array((1 << 20) / width);
  let count = 0;
  /** Data pointer → record number. */
  const numberOf = new Map<number, number>();
  const start = new Uint32Array(width);

  const textOf = (words: Uint32Array) => {
    const bytes: number[] = [];
    for (const word of words) bytes.push(word >>> 24, (word >>> 16) & 0xff, (word >>> 8) & 0xff, word & 0xff);
    return ipaddr.fromByteArray(bytes).toString();
  };

  const recordAt = (target: number): number => {
    // The tree's own "no data" pointer.
    if (target === nodeCount) return NO_RECORD;
    let n = numberOf.get(target);
    if (n === undefined) {
      // Decoded through the reader at the first address that reaches it: this one.
      const raw = reader.get(textOf(start)) as Record<string, unknown> | null;
      n = raw === null ? NO_RECORD : locations.add(fromDbip(raw));
      numberOf.set(target, n);
    }
    return n;
  };

  const append = (n: number) => {
    if (count === numbers.length) {
      const grownKeys = new Uint32Array(keys.length * 2);
      grownKeys.set(keys);
      keys = grownKeys;
      const grownNumbers = new Uint32Array(numbers.length * 2);
      grownNumbers.set(numbers);
      numbers = grownNumbers;
    }
    keys.set(start, count * width);
    numbers[count] = n;
    count += 1;
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
      const n = recordAt(next);
      if (n === last) continue;
      append(n);
      last = n;
    }
  };
  walk(0, 0);
  return { width, keys, numbers, count };
}

/** Compiles the DB-IP IPv4 and IPv6 mmdb files into one city table. */
export function compileCity(paths: { v4: string; v6: string }): Buffer {
  const locations = new Locations();
  const families: [Ranges, Ranges] = [walkCity(paths.v4, locations), walkCity(paths.v6, locations)];
  const records = locations.recordsSection();
  return layTable(CITY_MAGIC, CITY_VERSION, locations.stringsSection(), records, records.length / RECORD_BYTES, families);
}
