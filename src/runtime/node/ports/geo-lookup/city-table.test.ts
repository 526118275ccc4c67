// The compiled city table against MaxMind's reader on the mmdb files it was compiled from: for
// seeded random addresses of both versions, the edges of each space, and both sides of range
// boundaries of both families (every IPv6 one inside a /64, every 100th of the rest), the same
// location.
// Reads dist/data/ (npm test builds first), and the build's own code (scripts/geo/) and sources.
import ipaddr from 'ipaddr.js';
import { afterAll, describe, expect, it } from 'vitest';
import { fromDbip, Locations, walkCity } from '../../../../../scripts/geo/city-compile.js';
import { embeddedCityPaths } from '../../../../../scripts/geo/sources.js';
import { parseAddress } from '../../../../core/net/address.js';
import { embeddedCityTable } from './city-table.js';
import { openMmdb } from './mmdb.js';

// Seeded (mulberry32), so a failure names addresses that fail again.
let seed = 0x6e646961;
const next = () => {
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const random = (n: number) => Math.floor(next() * n);

/** An IPv6 address from four 32-bit words. */
const v6Text = (words: ArrayLike<number>) => ipaddr.fromByteArray(Array.from({ length: 16 }, (_, i) => ((words[i >> 2] ?? 0) >>> (24 - 8 * (i & 3))) & 0xff)).toString();
/** The words less one (the last address of the range before). */
const before = (words: ArrayLike<number>): number[] => {
  const out = Array.from(words);
  for (let w = out.length - 1; w >= 0; w--) {
    if (out[w] !== 0) {
      out[w] = ((out[w] ?? 0) - 1) >>> 0;
      return out;
    }
    out[w] = 0xffffffff;
  }
  return out;
};
const hex = () => random(0x10000).toString(16);

describe('the compiled city tables', () => {
  const table = embeddedCityTable();
  const paths = embeddedCityPaths();
  const mmdb = { v4: openMmdb(paths.v4), v6: openMmdb(paths.v6) };
  afterAll(() => {
    table.close();
  });
  const viaReader = (text: string) => {
    const address = parseAddress(text);
    if (address === undefined) throw new Error(text);
    const raw = (address.version === 'ipv4' ? mmdb.v4 : mmdb.v6).get(address);
    return raw === undefined ? undefined : fromDbip(raw);
  };
  const viaTable = (text: string) => {
    const address = parseAddress(text);
    if (address === undefined) throw new Error(text);
    return table.city(address);
  };

  it('give what the reader gives for 5000 random IPv4 addresses and the edges', () => {
    const addresses = ['0.0.0.0', '255.255.255.255', '8.8.8.8', '1.1.1.1', ...Array.from({ length: 5000 }, () => `${String(random(256))}.${String(random(256))}.${String(random(256))}.${String(random(256))}`)];
    for (const text of addresses) expect(viaTable(text), text).toEqual(viaReader(text));
    expect(viaTable('8.8.8.8')?.city).toBeTypeOf('string');
  });

  it('give what the reader gives for 5000 random IPv6 addresses (most in 2000::/3) and the edges', () => {
    const prefixes = ['2001', '2a01', '2a02', '2804', '2400', '2600', '2c0f'];
    const addresses = [
      '::',
      'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
      '2001:4860:4860::8888',
      ...Array.from({ length: 5000 }, () => `${prefixes[random(prefixes.length)] ?? '2001'}:${hex()}:${hex()}:${hex()}:${hex()}:${hex()}:${hex()}:${hex()}`),
    ];
    let located = 0;
    for (const text of addresses) {
      const expected = viaReader(text);
      if (expected !== undefined) located += 1;
      expect(viaTable(text), text).toEqual(expected);
    }
    // Most of these are in allocated space: a table that found nothing would not pass on equality alone.
    expect(located).toBeGreaterThan(2500);
  });

  it('give what the reader gives at both sides of range boundaries of both families: every IPv6 one inside a /64 and every 100th of the rest', () => {
    // The ranges as the source's search tree gives them (the compiler's walk, not the compiled file).
    const locations = new Locations();
    const starts: number[][] = [];
    for (const source of [paths.v4, paths.v6]) {
      const ranges = walkCity(source, locations);
      for (let e = 0; e < ranges.count; e++) {
        const key = Array.from(ranges.keys.subarray(e * ranges.width, (e + 1) * ranges.width));
        if (e % 100 === 0 || (ranges.width === 4 && ((key[2] ?? 0) !== 0 || (key[3] ?? 0) !== 0))) starts.push(key);
      }
    }
    const text = (words: number[]) => (words.length === 1 ? ipaddr.fromByteArray([24, 16, 8, 0].map((s) => ((words[0] ?? 0) >>> s) & 0xff)).toString() : v6Text(words));
    const wrong: string[] = [];
    let inside = 0;
    for (const start of starts) {
      if (start.length === 4 && ((start[2] ?? 0) !== 0 || (start[3] ?? 0) !== 0)) inside += 1;
      for (const address of [text(start), text(before(start))]) {
        const [got, expected] = [viaTable(address), viaReader(address)];
        if (JSON.stringify(got) !== JSON.stringify(expected)) wrong.push(`${address}: ${JSON.stringify(got)} against ${JSON.stringify(expected)}`);
      }
    }
    // About 36 800 IPv4 and 43 800 IPv6 starts, 10 000 of them inside a /64.
    expect(starts.length).toBeGreaterThan(80_000);
    expect(inside).toBeGreaterThan(9_000);
    expect(wrong.slice(0, 5)).toEqual([]);
  }, 120_000);
});
