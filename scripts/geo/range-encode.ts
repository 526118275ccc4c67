// Build side of what the compiled geo tables share (src/runtime/node/ports/geo-lookup/range-blocks.ts gives the
// ranges' layout and how a lookup reads it): a family's sorted ranges into blocks, each distinct
// text once, and a table's sections placed 4-byte aligned behind its header.
import { BLOCK, FAMILY_WORDS, FINE_STRIDE, HEADER_WORDS, NO_RECORD } from '../../src/runtime/node/ports/geo-lookup/range-blocks.js';

/** A family's ranges in address order: each first address (`width` words) and its record number. */
export interface Ranges {
  width: number;
  keys: Uint32Array;
  numbers: Uint32Array;
  count: number;
}


/** Bytes needed for a non-negative number below 2^32 (0 for 0). */
const bytesFor = (value: number) => (value === 0 ? 0 : Math.ceil(Math.log2(value + 1) / 8));

/** One family's sections: directory keys and offsets, blocks, fine entries. */
interface EncodedFamily {
  keyWidth: number;
  count: number;
  blocks: number;
  keys: Uint32Array;
  offsets: Uint32Array;
  body: Buffer;
  fine: Uint32Array;
}

/** A family's ranges as range-blocks.ts reads them. */
function encodeFamily(ranges: Ranges): EncodedFamily {
  const { width } = ranges;
  // IPv6: nearly every range starts on a /64 boundary (all but about 10 000 of DB-IP's 4.4 million), so the
  // blocks key them by their upper 64 bits, and the few that start inside a /64 go to the fine
  // entries with full keys (range-blocks.ts says how a lookup joins them).
  const keyWidth = width === 4 ? 2 : 1;
  const coarse: number[] = [];
  const fineList: number[] = [];
  for (let e = 0; e < ranges.count; e++) {
    const at = e * width;
    if (width === 4 && ((ranges.keys[at + 2] ?? 0) !== 0 || (ranges.keys[at + 3] ?? 0) !== 0)) fineList.push(e);
    else coarse.push(e);
  }
  const blocks = Math.ceil(coarse.length / BLOCK);
  const keys = new Uint32Array(blocks * keyWidth);
  const offsets = new Uint32Array(blocks + 1);
  const parts: Buffer[] = [];
  let bodyBytes = 0;
  const high = (e: number) => (keyWidth === 2 ? (ranges.keys[e * width] ?? 0) : 0);
  const low = (e: number) => ranges.keys[e * width + keyWidth - 1] ?? 0;
  for (let b = 0; b < blocks; b++) {
    const members = coarse.slice(b * BLOCK, (b + 1) * BLOCK);
    const first = members[0] ?? 0;
    keys.set(ranges.keys.subarray(first * width, first * width + keyWidth), b * keyWidth);
    // Each range's key less the first's, as high and low 32-bit parts.
    const deltas = members.map((e) => {
      let dLow = low(e) - low(first);
      let dHigh = high(e) - high(first);
      if (dLow < 0) {
        dLow += 0x1_0000_0000;
        dHigh -= 1;
      }
      return [dHigh, dLow] as const;
    });
    const keyBytes = Math.max(...deltas.map(([dHigh, dLow]) => (dHigh > 0 ? 4 + bytesFor(dHigh) : bytesFor(dLow))));
    const dictionary: number[] = [];
    const choiceOf = new Map<number, number>();
    for (const e of members) {
      const n = ranges.numbers[e] ?? NO_RECORD;
      if (!choiceOf.has(n)) {
        choiceOf.set(n, dictionary.length);
        dictionary.push(n);
      }
    }
    const stride = keyBytes + 1;
    const bytes = Buffer.alloc(2 + dictionary.length * 3 + members.length * stride);
    bytes[0] = keyBytes;
    bytes[1] = dictionary.length;
    dictionary.forEach((n, i) => bytes.writeUIntLE(n, 2 + i * 3, 3));
    let at = 2 + dictionary.length * 3;
    members.forEach((e, i) => {
      const [dHigh, dLow] = deltas[i] ?? [0, 0];
      const lowBytes = Math.min(keyBytes, 4);
      if (lowBytes > 0) bytes.writeUIntLE(dLow, at, lowBytes);
      if (keyBytes > 4) bytes.writeUIntLE(dHigh, at + 4, keyBytes - 4);
      bytes[at + keyBytes] = choiceOf.get(ranges.numbers[e] ?? NO_RECORD) ?? 0;
      at += stride;
    });
    offsets[b] = bodyBytes;
    parts.push(bytes);
    bodyBytes += bytes.length;
  }
  offsets[blocks] = bodyBytes;
  const fine = new Uint32Array(fineList.length * FINE_STRIDE);
  fineList.forEach((e, i) => {
    fine.set(ranges.keys.subarray(e * width, e * width + width), i * FINE_STRIDE);
    fine[i * FINE_STRIDE + 4] = ranges.numbers[e] ?? NO_RECORD;
  });
  return { keyWidth, count: coarse.length, blocks, keys, offsets, body: Buffer.concat(parts), fine };
}

/** A table file: a header of words, then sections, each 4-byte aligned, placed in order. */
class TableWriter {
  readonly header: Uint32Array;
  private readonly sections: Buffer[] = [];
  private size: number;

  constructor(headerWords: number) {
    this.header = new Uint32Array(headerWords);
    this.size = this.header.byteLength;
  }

  /** Appends a section and returns its byte offset in the file. */
  place(section: Buffer | Uint32Array): number {
    const bytes = section instanceof Buffer ? section : Buffer.from(section.buffer, section.byteOffset, section.byteLength);
    const at = this.size;
    const padding = (4 - (bytes.length % 4)) % 4;
    this.sections.push(bytes, Buffer.alloc(padding));
    this.size += bytes.length + padding;
    return at;
  }

  /** Places a family's sections and writes its FAMILY_WORDS into the header from `at`. */
  placeFamily(f: EncodedFamily, at: number): void {
    this.header.set([f.keyWidth, f.count, f.blocks, this.place(f.keys), this.place(f.offsets), this.place(f.body), f.fine.length / FINE_STRIDE, this.place(f.fine)], at);
  }

  bytes(): Buffer {
    return Buffer.concat([Buffer.from(this.header.buffer), ...this.sections]);
  }
}

/** Each distinct text once, as a 16-bit byte length and UTF-8, found by its byte offset. */
export class TextTable {
  private readonly offsets = new Map<string, number>();
  private readonly parts: Buffer[] = [];
  private size = 0;
  private readonly limit: number;
  private readonly what: string;

  /** `limit`: the offset the layout cannot reach (its "none" mark); `what`: the data, for the error. */
  constructor(limit: number, what: string) {
    this.limit = limit;
    this.what = what;
  }

  /** The offset of `text`, storing it if it is new. */
  add(text: string): number {
    let offset = this.offsets.get(text);
    if (offset === undefined) {
      const bytes = Buffer.from(text, 'utf8');
      offset = this.size;
      if (offset >= this.limit || bytes.length > 0xffff) throw new Error(`${this.what}: the texts outgrow the layout`);
      const length = Buffer.alloc(2);
      length.writeUInt16LE(bytes.length, 0);
      this.parts.push(length, bytes);
      this.size += 2 + bytes.length;
      this.offsets.set(text, offset);
    }
    return offset;
  }

  section(): Buffer {
    return Buffer.concat(this.parts);
  }
}

/**
 * A whole table as both geo tables lay it out: a header of HEADER_WORDS (magic, version, the texts'
 * byte offset and length, the records' byte offset and count) and FAMILY_WORDS for each family
 * (IPv4, then IPv6), then the texts, the records and each family's ranges.
 */
export function layTable(magic: number, version: number, texts: Buffer, records: Buffer | Uint32Array, recordCount: number, families: [Ranges, Ranges]): Buffer {
  const table = new TableWriter(HEADER_WORDS + 2 * FAMILY_WORDS);
  table.header.set([magic, version, table.place(texts), texts.length, table.place(records), recordCount]);
  families.map(encodeFamily).forEach((f, i) => {
    table.placeFamily(f, HEADER_WORDS + i * FAMILY_WORDS);
  });
  return table.bytes();
}
