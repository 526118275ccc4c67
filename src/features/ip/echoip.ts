// `/json` (and `/` asked for JSON) in the form of echoip, the software behind ifconfig.co, so a
// script written for it (`curl host/json | jq -r .country_iso`) runs unchanged against netdiag
// (docs/api.md, "A drop-in for ifconfig.co scripts"). echoip leaves an empty field out; here every
// field is always present and null where netdiag has no value, so a reader can tell "not known
// here" from a field this server never had. /v1/ip keeps the contract's own shape.
import type { ParsedAddress } from '../../core/net/address.js';
import type { Schemas } from '../../generated/openapi-types.js';
import type { CallerPlace } from './facts.js';

type EchoipData = Schemas['EchoipData'];

/** The European Union's 27 member states (ISO 3166-1 alpha-2), since 1 February 2020. */
const EU = new Set(['AT', 'BE', 'BG', 'HR', 'CY', 'CZ', 'DK', 'EE', 'FI', 'FR', 'DE', 'GR', 'HU', 'IE', 'IT', 'LV', 'LT', 'LU', 'MT', 'NL', 'PL', 'PT', 'RO', 'SK', 'SI', 'ES', 'SE']);

/**
 * The address as one unsigned integer, in decimal digits: an IPv6 address needs up to 39 of them,
 * more than a JSON number read as a double keeps, so the digits are written as they are (echoip
 * writes its big.Int the same way; jq 1.7 and most JSON libraries with big-number support keep
 * them).
 */
function decimalOf(address: ParsedAddress): string {
  if (address.v4 !== undefined) return String(address.v4);
  let value = 0n;
  for (const byte of address.addr.toByteArray()) value = (value << 8n) | BigInt(byte);
  return value.toString();
}

/** The echoip object for an address, its place and its reverse name, in echoip's field order. */
export function echoipData(address: ParsedAddress, place: CallerPlace, hostname: string | null): Omit<EchoipData, 'ip_decimal'> {
  const { location, network } = place;
  return {
    ip: address.text,
    country: location.country,
    country_iso: location.country_code,
    country_eu: location.country_code === null ? null : EU.has(location.country_code),
    region_name: location.region,
    // Neither DB-IP Lite nor the fields netdiag keeps of an operator's MaxMind data carry a
    // region's code or a US metro (DMA) code.
    region_code: null,
    metro_code: null,
    zip_code: location.postal_code,
    city: location.city,
    latitude: location.latitude,
    longitude: location.longitude,
    time_zone: location.timezone,
    asn: network.asn === null ? null : `AS${String(network.asn)}`,
    asn_org: network.organization,
    hostname,
    // echoip parses the caller's User-Agent into an object; netdiag keeps nothing of it and does
    // not send it back (docs/api.md, "Privacy"): the caller has it already.
    user_agent: null,
  };
}

/**
 * The JSON text, indented as echoip writes it, with `ip_decimal` second and written as digits
 * (see decimalOf), and a final newline for a terminal. Every value is a string, number, boolean
 * or null, so the object is written field by field, each value by `JSON.stringify`: the same text
 * as `JSON.stringify(data, null, 2)`, which with an indent leaves V8's fast path.
 */
export function echoipJson(address: ParsedAddress, data: Omit<EchoipData, 'ip_decimal'>): string {
  let text = `{\n  "ip": ${JSON.stringify(data.ip)},\n  "ip_decimal": ${decimalOf(address)}`;
  for (const key of FIELDS_AFTER_DECIMAL) text += `,\n  "${key}": ${JSON.stringify(data[key])}`;
  return `${text}\n}\n`;
}

/** echoip's fields after `ip` and `ip_decimal`, in its order (echoipData writes them so). */
const FIELDS_AFTER_DECIMAL = [
  'country', 'country_iso', 'country_eu', 'region_name', 'region_code', 'metro_code', 'zip_code', 'city',
  'latitude', 'longitude', 'time_zone', 'asn', 'asn_org', 'hostname', 'user_agent',
] as const satisfies readonly Exclude<keyof EchoipData, 'ip' | 'ip_decimal'>[];
