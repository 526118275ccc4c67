// Mutations of corpus entries, as fast-check arbitraries so that a failing input shrinks to a
// short list of small edits of one seed. Positions are drawn as any natural number and taken
// modulo the input's length, so one edit list applies to an input of any size.
import fc from 'fast-check';

/**
 * Bytes that mean something to one of the parsers: 0 and the extremes of a signed and an
 * unsigned byte, DNS's compression-pointer marker, and the separators and quotes of the text
 * grammars (CR LF, space, `,` `;` `=` `"` `\` `[` `]` `:` `%` `&` `+` `~`).
 */
const INTERESTING_BYTES = [0x00, 0x01, 0x3f, 0x40, 0x7f, 0x80, 0xc0, 0xff, 0x0d, 0x0a, 0x20, 0x2c, 0x3b, 0x3d, 0x22, 0x5c, 0x5b, 0x5d, 0x3a, 0x25, 0x26, 0x2b, 0x7e];

/** 16-bit values for length and count fields (DNS RDLENGTH and counts, PROXY v2's length): at and beside the boundaries. */
const INTERESTING_U16 = [0, 1, 2, 3, 4, 16, 63, 64, 107, 108, 255, 256, 0x7fff, 0x8000, 2032, 2033, 0xffff];

export type Edit =
  | { kind: 'flip'; at: number; bit: number }
  | { kind: 'set'; at: number; byte: number }
  | { kind: 'u16'; at: number; value: number }
  | { kind: 'insert'; at: number; bytes: Uint8Array }
  | { kind: 'delete'; at: number; count: number }
  | { kind: 'truncate'; at: number }
  | { kind: 'repeat'; from: number; length: number; times: number }
  | { kind: 'splice'; other: number; at: number; from: number };

const edit: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({ kind: fc.constant('flip' as const), at: fc.nat(), bit: fc.nat(7) }),
  fc.record({ kind: fc.constant('set' as const), at: fc.nat(), byte: fc.oneof(fc.constantFrom(...INTERESTING_BYTES), fc.nat(255)) }),
  fc.record({ kind: fc.constant('u16' as const), at: fc.nat(), value: fc.oneof(fc.constantFrom(...INTERESTING_U16), fc.nat(0xffff)) }),
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), bytes: fc.oneof(fc.uint8Array({ minLength: 1, maxLength: 8 }), fc.constantFrom(...INTERESTING_BYTES).map((b) => Uint8Array.of(b))) }),
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat(), count: fc.integer({ min: 1, max: 8 }) }),
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('repeat' as const), from: fc.nat(), length: fc.integer({ min: 1, max: 16 }), times: fc.integer({ min: 1, max: 64 }) }),
  fc.record({ kind: fc.constant('splice' as const), other: fc.nat(), at: fc.nat(), from: fc.nat() }),
);

function concat(...parts: Uint8Array[]): Uint8Array {
  const joined = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    joined.set(part, offset);
    offset += part.length;
  }
  return joined;
}

/** `input` with one edit applied; `corpus` is where a splice takes its other half from. */
export function applyEdit(input: Uint8Array, change: Edit, corpus: readonly Uint8Array[]): Uint8Array {
  const n = input.length;
  // An edit that needs a byte to act on inserts at the start of an empty input instead.
  const at = (position: number, span = n) => (span === 0 ? 0 : position % span);
  switch (change.kind) {
    case 'flip': {
      if (n === 0) return input;
      const copy = Uint8Array.from(input);
      const i = at(change.at);
      copy[i] = (copy[i] ?? 0) ^ (1 << change.bit);
      return copy;
    }
    case 'set': {
      if (n === 0) return Uint8Array.of(change.byte);
      const copy = Uint8Array.from(input);
      copy[at(change.at)] = change.byte;
      return copy;
    }
    case 'u16': {
      // Big-endian, network byte order, as every binary field here is written.
      if (n < 2) return Uint8Array.of(change.value >> 8, change.value & 0xff);
      const copy = Uint8Array.from(input);
      const i = at(change.at, n - 1);
      copy[i] = change.value >> 8;
      copy[i + 1] = change.value & 0xff;
      return copy;
    }
    case 'insert': {
      const i = at(change.at, n + 1);
      return concat(input.subarray(0, i), change.bytes, input.subarray(i));
    }
    case 'delete': {
      const i = at(change.at);
      return concat(input.subarray(0, i), input.subarray(i + change.count));
    }
    case 'truncate':
      return input.subarray(0, at(change.at));
    case 'repeat': {
      if (n === 0) return input;
      const from = at(change.from);
      const slice = input.subarray(from, from + change.length);
      return concat(input.subarray(0, from), ...Array<Uint8Array>(change.times).fill(slice), input.subarray(from));
    }
    case 'splice': {
      // The head of this input and the tail of another: two valid messages crossed.
      const other = corpus[at(change.other, corpus.length)] ?? input;
      return concat(input.subarray(0, at(change.at, n + 1)), other.subarray(at(change.from, other.length + 1)));
    }
  }
}

/**
 * Entries of `corpus()` with one to six edits each. The corpus is read at generation time, so
 * entries kept while a run goes (coverage.ts) are mutated in turn.
 */
export function mutated(corpus: () => readonly Uint8Array[]): fc.Arbitrary<Uint8Array> {
  return fc.tuple(fc.nat(), fc.array(edit, { minLength: 1, maxLength: 6 })).map(([pick, edits]) => {
    const entries = corpus();
    let input = entries.length === 0 ? new Uint8Array() : (entries[pick % entries.length] ?? new Uint8Array());
    for (const change of edits) input = applyEdit(input, change, entries);
    return input;
  });
}
