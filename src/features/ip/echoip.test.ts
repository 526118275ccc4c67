// echoip's JSON text, written field by field for speed, against the standard library writing the
// same object with a two-space indent: the text scripts parse must not change with the method.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseAddress } from '../../core/net/address.js';
import type { CallerPlace } from './facts.js';
import { echoipData, echoipJson } from './echoip.js';

const text = fc.option(fc.string({ unit: 'binary', maxLength: 40 }), { nil: null });
const coordinate = fc.option(fc.double({ min: -180, max: 180, noNaN: true }), { nil: null });
const place: fc.Arbitrary<CallerPlace> = fc.record({
  location: fc.record({
    country: text,
    country_code: fc.option(fc.constantFrom('SE', 'DE', 'US', 'GB'), { nil: null }),
    region: text,
    city: text,
    postal_code: text,
    latitude: coordinate,
    longitude: coordinate,
    timezone: text,
  }),
  network: fc.record({ asn: fc.option(fc.nat(4_294_967_295), { nil: null }), organization: text }),
  colo: fc.constant(null),
});
const address = fc.oneof(fc.ipV4(), fc.ipV6()).map((a) => parseAddress(a)).filter((a) => a !== undefined);

describe('echoipJson', () => {
  it('writes the text JSON.stringify(…, null, 2) writes, ip_decimal second as digits', () => {
    fc.assert(
      fc.property(address, place, fc.option(fc.domain(), { nil: null }), (parsed, where, hostname) => {
        const data = echoipData(parsed, where, hostname);
        const decimal = parsed.v4 !== undefined ? String(parsed.v4) : BigInt(`0x${parsed.addr.toByteArray().map((b) => b.toString(16).padStart(2, '0')).join('')}`).toString();
        const { ip, ...rest } = data;
        const expected = `{\n  "ip": ${JSON.stringify(ip)},\n  "ip_decimal": ${decimal},\n${JSON.stringify(rest, null, 2).slice(2)}\n`;
        expect(echoipJson(parsed, data)).toBe(expected);
      }),
      { numRuns: 300 },
    );
  });
});
