// The compiled ASN table against the CSVs it was compiled from (ip-location-db's asn-ipv4-num.csv
// and asn-ipv6-num.csv), for both families: sampled ranges at their first, last and a middle
// address, the addresses either side of sampled gaps, both sides of every 20th range's start, and
// (IPv4) the edges of every /16. The CSV is read here on its own terms: an address belongs to the
// last row that starts at or below it, if that row reaches it. Reads dist/data/ (npm test builds
// first) and the build's sources.
import { readFileSync } from 'node:fs';
import ipaddr from 'ipaddr.js';
import { describe, expect, it } from 'vitest';
import { embeddedAsnPaths } from '../../../../../scripts/geo/sources.js';
import { text } from '../../../../core/ports/geo-lookup.js';
import { parseAddress } from '../../../../core/net/address.js';
import { embeddedAsn } from './asn-table.js';

interface Row {
  start: bigint;
  end: bigint;
  asn: number;
  org: string;
}

/** The CSV's rows in file order (sorted by start), organisation names unquoted (RFC 4180). */
function csvRows(path: string): Row[] {
  const rows: Row[] = [];
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const match = /^([0-9]+),([0-9]+),([0-9]+),(?:"((?:[^"]|"")*)"|(.*))$/.exec(line);
    if (match === null) continue;
    rows.push({ start: BigInt(match[1] ?? ''), end: BigInt(match[2] ?? ''), asn: Number(match[3]), org: match[4] === undefined ? (match[5] ?? '') : match[4].replaceAll('""', '"') });
  }
  return rows;
}

// Seeded (mulberry32), so a failure names addresses that fail again.
let seed = 0x61736e21;
const random = (n: number) => {
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
};

const FAMILIES = [
  { family: 'IPv4', bits: 32, path: () => embeddedAsnPaths().v4 },
  { family: 'IPv6', bits: 128, path: () => embeddedAsnPaths().v6 },
] as const;

/** The table and the CSV of one family, and a check of one address that notes a disagreement. */
function against(bits: number, path: string) {
  const table = embeddedAsn();
  const rows = csvRows(path);
  const textOf = (n: bigint) => ipaddr.fromByteArray(Array.from({ length: bits / 8 }, (_, i) => Number((n >> BigInt(bits - 8 - 8 * i)) & 0xffn))).toString();
  const lookup = (n: bigint) => {
    const address = parseAddress(textOf(n));
    if (address === undefined) throw new Error(textOf(n));
    return table.asn(address);
  };
  /** What the CSV says of an address. */
  const expected = (n: bigint) => {
    let lo = 0;
    let hi = rows.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if ((rows[mid]?.start ?? 0n) <= n) lo = mid;
      else hi = mid - 1;
    }
    const row = rows[lo];
    return row !== undefined && row.start <= n && n <= row.end ? { asn: row.asn, organization: text(row.org, 160) } : undefined;
  };
  const wrong: string[] = [];
  const check = (n: bigint) => {
    if (n < 0n || n >= 1n << BigInt(bits)) return;
    const [got, want] = [lookup(n), expected(n)];
    if (JSON.stringify(got) !== JSON.stringify(want)) wrong.push(`${textOf(n)}: ${JSON.stringify(got)} against ${JSON.stringify(want)}`);
  };
  return { rows, lookup, check, wrong };
}

describe.each(FAMILIES)('the compiled ASN table ($family)', ({ bits, path }) => {
  const { rows, lookup, check, wrong } = against(bits, path());

  it('finds sampled ranges at their first, last and a middle address, with the organisation', () => {
    expect(rows.length).toBeGreaterThan(bits === 32 ? 100_000 : 50_000);
    let found = 0;
    for (let k = 0; k < 5000; k++) {
      const row = rows[random(rows.length)];
      if (row === undefined) continue;
      const middle = row.start + ((row.end - row.start) * BigInt(random(1000))) / 1000n;
      for (const n of [row.start, row.end, middle]) {
        check(n);
        if (lookup(n) !== undefined) found += 1;
      }
    }
    expect(wrong.slice(0, 5)).toEqual([]);
    // A table that found nothing would agree with nothing; one that found everything would not pass the gaps below.
    expect(found).toBeGreaterThan(10_000);
  });

  it('finds nothing in the gaps between ranges, and the neighbours on either side', () => {
    let gaps = 0;
    for (let k = 1; k < rows.length && gaps < 2000; k += 1 + random(100)) {
      const before = rows[k - 1];
      const after = rows[k];
      if (before === undefined || after === undefined || after.start <= before.end + 1n) continue;
      gaps += 1;
      expect(lookup(before.end + 1n)).toBeUndefined();
      expect(lookup(after.start - 1n)).toBeUndefined();
      for (const n of [before.end, before.end + 1n, after.start - 1n, after.start]) check(n);
    }
    expect(wrong.slice(0, 5)).toEqual([]);
    expect(gaps).toBeGreaterThan(500);
  });

  it('agrees with the CSV on both sides of every 20th range start, and at the ends of the space', () => {
    const top = (1n << BigInt(bits)) - 1n;
    for (const n of [0n, 1n, top, top - 1n]) check(n);
    for (let k = 0; k < rows.length; k += 20) {
      const row = rows[k];
      if (row !== undefined) for (const n of [row.start - 1n, row.start, row.end, row.end + 1n]) check(n);
    }
    expect(wrong.slice(0, 5)).toEqual([]);
  });

});

describe('the compiled ASN table (IPv4, every /16)', () => {
  it('agrees with the CSV on both sides of every /16 edge', () => {
    const { check, wrong } = against(32, embeddedAsnPaths().v4);
    for (let prefix = 1n; prefix < 65_536n; prefix++) {
      check(prefix * 65_536n - 1n);
      check(prefix * 65_536n);
    }
    expect(wrong.slice(0, 5)).toEqual([]);
  });
});
