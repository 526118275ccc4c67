// The compiled city tables against MaxMind's reader on the mmdb files they were compiled from:
// for seeded random addresses of both versions, the edges of each space, and both sides of the
// IPv6 ranges' boundaries (every one that starts inside a /64, every 500th of the rest), the same
// location.
// Reads dist/data/ (npm test builds first), and the build's own code (scripts/geo/) and sources.
import { closeSync, openSync, readSync } from 'node:fs';
import ipaddr from 'ipaddr.js';
import { afterAll, describe, expect, it } from 'vitest';
import { fromDbip } from '../../../../scripts/geo/city-compile.js';
import { embeddedCityPaths } from '../../../../scripts/geo/sources.js';
import { parseAddress } from '../../../core/net/address.js';
import { cityTablePath, embeddedCityTable, HEADER_WORDS } from './city-table.js';
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

  it('give what the reader gives at both sides of every IPv6 range that starts inside a /64, and of every 500th that starts on one', () => {
    // The ranges as the file holds them: its header, then the fine entries and the /64-keyed ones.
    const fd = openSync(cityTablePath(6), 'r');
    const header = new Uint32Array(HEADER_WORDS);
    readSync(fd, header, 0, header.byteLength, 0);
    const [, , width = 0, entries = 0, , , entriesAt = 0, , fineEntries = 0, fineAt = 0] = header;
    const fine = new Uint32Array(fineEntries * 5);
    readSync(fd, fine, 0, fine.byteLength, fineAt);
    const coarse = new Uint32Array(Math.ceil(entries / 500) * (width + 1));
    const one = new Uint32Array(width + 1);
    for (let e = 0, i = 0; e < entries; e += 500, i++) {
      readSync(fd, one, 0, one.byteLength, entriesAt + e * (width + 1) * 4);
      coarse.set(one, i * (width + 1));
    }
    closeSync(fd);
    expect(width).toBe(2);
    expect(fineEntries).toBeGreaterThan(1000);
    const starts: number[][] = [];
    for (let f = 0; f < fineEntries; f++) starts.push(Array.from(fine.subarray(f * 5, f * 5 + 4)));
    for (let c = 0; c * (width + 1) < coarse.length; c++) starts.push([coarse[c * (width + 1)] ?? 0, coarse[c * (width + 1) + 1] ?? 0, 0, 0]);
    const wrong: string[] = [];
    for (const start of starts) {
      for (const text of [v6Text(start), v6Text(before(start))]) {
        const [got, expected] = [viaTable(text), viaReader(text)];
        if (JSON.stringify(got) !== JSON.stringify(expected)) wrong.push(`${text}: ${JSON.stringify(got)} against ${JSON.stringify(expected)}`);
      }
    }
    expect(starts.length).toBeGreaterThan(9000);
    expect(wrong.slice(0, 5)).toEqual([]);
  }, 60_000);
});
