// The compiled ASN table against the CSV it was compiled from (ip-location-db's
// asn-ipv4-num.csv): for sampled ranges their first, last and a middle address, the addresses
// either side of every gap sampled, and the edges of /16s, where the table's first-level index
// changes hands. Reads dist/data/ (npm test builds first) and the build's source (scripts/geo/).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { embeddedAsnPaths } from '../../../../scripts/geo/sources.js';
import { parseAddress } from '../../../core/net/address.js';
import { embeddedAsn } from './asn-table.js';

interface Row {
  start: number;
  end: number;
  asn: number;
}

/** The CSV's ranges, sorted by start as the file is: only the numbers, the names are not compared here. */
function csvRows(): Row[] {
  const rows: Row[] = [];
  for (const line of readFileSync(embeddedAsnPaths().v4, 'latin1').split('\n')) {
    const [start, end, asn] = line.split(',', 3);
    if (start === undefined || end === undefined || asn === undefined || start === '') continue;
    rows.push({ start: Number(start), end: Number(end), asn: Number(asn) });
  }
  return rows;
}

const dotted = (n: number) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
const random = (n: number) => Math.floor(Math.random() * n);

describe('the compiled ASN table (IPv4)', () => {
  const table = embeddedAsn();
  const rows = csvRows();
  const asnOf = (n: number) => {
    const address = parseAddress(dotted(n));
    if (address === undefined) throw new Error(dotted(n));
    return table.asn(address)?.asn;
  };
  /** What the CSV says of an address: the ASN of the range holding it (the last one starting at or below it). */
  const expected = (n: number): number | undefined => {
    let lo = 0;
    let hi = rows.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if ((rows[mid]?.start ?? 0) <= n) lo = mid;
      else hi = mid - 1;
    }
    const row = rows[lo];
    return row !== undefined && row.start <= n && n <= row.end ? row.asn : undefined;
  };

  it('finds every sampled range at its first, last and a middle address', () => {
    expect(rows.length).toBeGreaterThan(100_000);
    for (let k = 0; k < 5000; k++) {
      const row = rows[random(rows.length)];
      if (row === undefined) continue;
      for (const n of [row.start, row.end, row.start + random(row.end - row.start + 1)]) expect(asnOf(n), dotted(n)).toBe(row.asn);
    }
  });

  it('finds nothing in the gaps between ranges, and the neighbours on either side', () => {
    let gaps = 0;
    for (let k = 1; k < rows.length && gaps < 2000; k += 1 + random(200)) {
      const before = rows[k - 1];
      const after = rows[k];
      if (before === undefined || after === undefined || after.start <= before.end + 1) continue;
      gaps += 1;
      expect(asnOf(before.end + 1), dotted(before.end + 1)).toBeUndefined();
      expect(asnOf(after.start - 1), dotted(after.start - 1)).toBeUndefined();
      expect(asnOf(before.end)).toBe(before.asn);
      expect(asnOf(after.start)).toBe(after.asn);
    }
    expect(gaps).toBeGreaterThan(500);
  });

  it('agrees with the CSV on both sides of every /16 edge and at the ends of the space', () => {
    const addresses = [0, 1, 0xffffffff, 0xfffffffe];
    for (let prefix = 1; prefix < 65_536; prefix++) addresses.push(prefix * 65_536 - 1, prefix * 65_536);
    let found = 0;
    for (const n of addresses) {
      const want = expected(n);
      if (want !== undefined) found += 1;
      expect(asnOf(n), dotted(n)).toBe(want);
    }
    // A table that found nothing would agree on the unrouted edges alone.
    expect(found).toBeGreaterThan(50_000);
  });
});
