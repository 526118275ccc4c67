// The geo lookup port: approximate location and network of a public address, the contract's
// fields and their bounds. Its conformance suite is geo-lookup.conformance.ts beside it; every
// lookup runs it.
import type { ParsedAddress } from '../net/address.js';

/** NetworkInformation (the API contract): both null when unknown. */
export interface NetworkInformation {
  asn: number | null;
  organization: string | null;
}

/** LocationInformation (the API contract): approximate; null means unavailable, never a text like "unknown". */
export interface LocationInformation {
  city: string | null;
  region: string | null;
  country: string | null;
  country_code: string | null;
  postal_code: string | null;
  timezone: string | null;
  latitude: number | null;
  longitude: number | null;
}

/** Port: approximate location of a public address (embedded DB-IP data, or a MaxMind file). */
export interface CityLookup {
  city(address: ParsedAddress): Omit<LocationInformation, 'country'> | undefined;
}

/** Port: the network an address belongs to (embedded table, or a MaxMind ASN file). */
export interface AsnLookup {
  asn(address: ParsedAddress): NetworkInformation | undefined;
}

/** Lookups with no data of their own: Workers (the edge tells the caller's place with the request) and the in-process suites. */
export const NO_GEO: { city: CityLookup; asn: AsnLookup } = { city: { city: () => undefined }, asn: { asn: () => undefined } };

export const NO_NETWORK: NetworkInformation = { asn: null, organization: null };

export const NO_LOCATION: LocationInformation = {
  city: null,
  region: null,
  country: null,
  country_code: null,
  postal_code: null,
  timezone: null,
  latitude: null,
  longitude: null,
};

/** A text field as the spec wants it: trimmed, cut to its bound, and null rather than empty. */
export function text(value: unknown, max: number): string | null {
  if (typeof value !== 'string') return null;
  const trimmed = value.trim();
  return trimmed === '' ? null : trimmed.slice(0, max);
}

/** Coordinates rounded to 4 decimals (about 11 m): the data is approximate, the digits are not. */
export function coordinate(value: unknown, bound: number): number | null {
  if (typeof value !== 'number' || !Number.isFinite(value) || Math.abs(value) > bound) return null;
  return Math.round(value * 10_000) / 10_000;
}

/** ISO 3166-1 alpha-2 code, or null. */
export function countryCode(value: unknown): string | null {
  return typeof value === 'string' && /^[A-Z]{2}$/.test(value) ? value : null;
}
