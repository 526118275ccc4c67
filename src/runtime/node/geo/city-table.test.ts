// The compiled city tables against MaxMind's reader on the mmdb files they were compiled from:
// for random addresses of both versions and the edges of each space, the same location.
// Reads dist/data/ (npm test builds first), and the build's own code (scripts/geo/) and sources.
import { afterAll, describe, expect, it } from 'vitest';
import { fromDbip } from '../../../../scripts/geo/city-compile.js';
import { embeddedCityPaths } from '../../../../scripts/geo/sources.js';
import { parseAddress } from '../../../core/net/address.js';
import { embeddedCityTable } from './city-table.js';
import { openMmdb } from './mmdb.js';

const random = (n: number) => Math.floor(Math.random() * n);
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
});
