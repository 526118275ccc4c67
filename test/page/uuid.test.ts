// The page's event_id (web/events/uuid.ts): a version 4 UUID from crypto.getRandomValues, so the speed
// test also starts where crypto.randomUUID is missing (an insecure context).
import { afterEach, describe, expect, it } from 'vitest';
import { uuidV4 } from '../../web/events/uuid.js';

const V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const fillWith = (byte: (i: number) => number) => (bytes: Uint8Array) => {
  bytes.forEach((_, i) => (bytes[i] = byte(i)));
};

describe('uuidV4', () => {
  const randomUUID = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(crypto) as object, 'randomUUID');
  afterEach(() => {
    if (randomUUID !== undefined) Object.defineProperty(Object.getPrototypeOf(crypto) as object, 'randomUUID', randomUUID);
  });

  it('lays the 16 random octets out as 8-4-4-4-12 lowercase hex, in order', () => {
    expect(uuidV4(fillWith((i) => i * 17))).toBe('00112233-4455-4677-8899-aabbccddeeff');
  });

  it('sets the version (4) and variant (10) bits and keeps the other 122 (RFC 9562 §5.4)', () => {
    expect(uuidV4(fillWith(() => 0))).toBe('00000000-0000-4000-8000-000000000000');
    expect(uuidV4(fillWith(() => 0xff))).toBe('ffffffff-ffff-4fff-bfff-ffffffffffff');
  });

  it('gives distinct, well-formed ids with every free bit seen both ways', () => {
    const seen = new Set<string>();
    let ones = 0n;
    let zeros = 0n;
    for (let i = 0; i < 2000; i++) {
      const id = uuidV4();
      expect(id).toMatch(V4);
      seen.add(id);
      const bits = BigInt(`0x${id.replaceAll('-', '')}`);
      ones |= bits;
      zeros |= ~bits & ((1n << 128n) - 1n);
    }
    expect(seen.size).toBe(2000);
    // Only the six fixed bits (version 0100 at 76-79, variant 10 at 62-63) never vary.
    const fixed = (0xfn << 76n) | (0x3n << 62n);
    expect((ones & zeros) | fixed).toBe((1n << 128n) - 1n);
  });

  it('needs no crypto.randomUUID, which insecure contexts lack', () => {
    // What a browser offers on plain HTTP by address: getRandomValues, but no randomUUID.
    Object.defineProperty(Object.getPrototypeOf(crypto) as object, 'randomUUID', { value: undefined, configurable: true });
    expect((crypto as { randomUUID?: unknown }).randomUUID).toBeUndefined();
    expect(uuidV4()).toMatch(V4);
  });
});
