// The geo lookup port's conformance suite (geo-lookup.ts): whatever a lookup answers has the
// contract's shape and bounds, it answers nothing of a special-use address, never throws on any
// address, and knows the address its data names. Run by the embedded DB-IP tables and an
// operator's MaxMind files (src/runtime/node/ports/conformance.test.ts), Workers' lookups, which answer
// nothing of their own (test/workers/ports.test.ts), and the in-process suites' (src/core/ports/in-memory.test.ts).
import { describe, expect, it } from 'vitest';
import { parseAddress, type ParsedAddress } from '../net/address.js';
import type { AsnLookup, CityLookup } from './geo-lookup.js';

interface GeoUnderTest {
  city: CityLookup;
  asn: AsnLookup;
  /** An address the place data holds and its country, and one the network data holds and its AS, where the lookup has data. */
  knownPlace?: { address: string; countryCode: string };
  knownNetwork?: { address: string; asn: number };
}

const parsed = (text: string): ParsedAddress => {
  const address = parseAddress(text);
  if (address === undefined) throw new Error(`not an address: ${text}`);
  return address;
};

/** Public addresses of both families spread over the space, and forms of one (mapped, compatible). */
const PUBLIC = ['1.1.1.1', '8.8.8.8', '81.2.69.160', '89.160.20.112', '216.160.83.56', '223.255.255.254', '2001:218::1', '2a02:cf40::1', '2001:4860:4860::8888', '::ffff:8.8.8.8'];
/** Special-use addresses (RFC 6890): no data may place them. */
const SPECIAL = ['127.0.0.1', '10.1.2.3', '192.168.0.1', '100.64.0.1', '169.254.1.1', '::1', 'fe80::1', 'fc00::1', '0.0.0.0'];

/** A text field: null or trimmed, non-empty and at most `max` characters. */
function expectText(value: unknown, max: number): void {
  if (value === null) return;
  expect(typeof value).toBe('string');
  const text = value as string;
  expect(text.length).toBeGreaterThan(0);
  expect(text.length).toBeLessThanOrEqual(max);
  expect(text.trim()).toBe(text);
}

function expectCoordinate(value: unknown, bound: number): void {
  if (value === null) return;
  expect(typeof value).toBe('number');
  expect(Math.abs(value as number)).toBeLessThanOrEqual(bound);
  // Four decimals at most (about 11 m): the data is approximate, the digits are not.
  expect(Math.round((value as number) * 10_000) / 10_000).toBe(value);
}

export function geoLookupConformance(name: string, make: () => Promise<GeoUnderTest> | GeoUnderTest): void {
  describe(`${name} geo lookup conformance`, () => {
    it('answers in the contract\'s shape and bounds, or nothing', async () => {
      const { city, asn } = await make();
      for (const text of PUBLIC) {
        const place = city.city(parsed(text));
        if (place !== undefined) {
          expectText(place.city, 100);
          expectText(place.region, 100);
          expectText(place.postal_code, 32);
          expectText(place.timezone, 64);
          if (place.country_code !== null) expect(place.country_code).toMatch(/^[A-Z]{2}$/);
          expectCoordinate(place.latitude, 90);
          expectCoordinate(place.longitude, 180);
        }
        const network = asn.asn(parsed(text));
        if (network !== undefined) {
          if (network.asn !== null) expect(Number.isInteger(network.asn) && network.asn > 0 && network.asn < 2 ** 32).toBe(true);
          expectText(network.organization, 160);
        }
      }
    });

    it('places no special-use address', async () => {
      const { city, asn } = await make();
      for (const text of SPECIAL) {
        expect(city.city(parsed(text))?.country_code ?? null, text).toBeNull();
        expect(asn.asn(parsed(text))?.asn ?? null, text).toBeNull();
      }
    });

    it('knows the addresses its data names', async () => {
      const { city, asn, knownPlace, knownNetwork } = await make();
      if (knownPlace !== undefined) expect(city.city(parsed(knownPlace.address))?.country_code).toBe(knownPlace.countryCode);
      if (knownNetwork !== undefined) expect(asn.asn(parsed(knownNetwork.address))?.asn).toBe(knownNetwork.asn);
    });
  });
}
