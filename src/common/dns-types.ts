// src/common/: rules the clients (the page, the command line's client code) share with the server;
// besides the contract's generated types, the one part of src/ a client may import; it imports nothing else.

/**
 * The record types netdiag resolves (the API contract's allowlist), in the order it lists them:
 * each one's TYPE on the wire (RFC 1035 §3.2.2; AAAA RFC 3596 §2.1) and the shape of its answer
 * (DnsAnswer below). The one list: the resolver's queries and decoding, the route's check, the
 * page's selector and the command line's help all read it, and a test holds it to the OpenAPI
 * document. A new type of an existing shape is a line here and in openapi.yaml (docs/design.md,
 * "Adding a record type").
 */
export const RECORD_TYPES = {
  A: { code: 1, shape: 'address' },
  AAAA: { code: 28, shape: 'address' },
  CNAME: { code: 5, shape: 'target' },
  MX: { code: 15, shape: 'exchange' },
  NS: { code: 2, shape: 'target' },
  TXT: { code: 16, shape: 'text' },
  PTR: { code: 12, shape: 'target' },
} as const;
export type DnsType = keyof typeof RECORD_TYPES;
export const DNS_TYPES = Object.keys(RECORD_TYPES) as readonly DnsType[];
type Shape = (typeof RECORD_TYPES)[DnsType]['shape'];
/** The types whose answers have shape `S`. */
type TypesOf<S extends Shape> = { [K in DnsType]: (typeof RECORD_TYPES)[K]['shape'] extends S ? K : never }[DnsType];

export function isDnsType(value: string): value is DnsType {
  return (DNS_TYPES as readonly string[]).includes(value);
}

export type ResponseCode = 'no_error' | 'name_error' | 'refused' | 'server_failure' | 'other';

/** The four answer shapes of the spec (§2, DnsAnswer), each for the types of that shape. */
export type DnsAnswer =
  | { type: TypesOf<'address'>; name: string; ttl_seconds: number; address: string }
  | { type: TypesOf<'target'>; name: string; ttl_seconds: number; target: string }
  | { type: TypesOf<'exchange'>; name: string; ttl_seconds: number; preference: number; exchange: string }
  | { type: TypesOf<'text'>; name: string; ttl_seconds: number; value: string };

/** A resolved, validated upstream answer, as the spec shapes it. */
export interface DnsResult {
  responseCode: ResponseCode;
  answers: DnsAnswer[];
  /**
   * How long the whole result may be cached, in seconds: the minimum answer TTL, or the
   * negative TTL from the SOA (RFC 2308 §5); 0 when it must not be cached.
   */
  cacheTtl: number;
}

/** Bounds of the API contract. */
export const MAX_ANSWERS = 50;
export const MAX_TXT_CHARACTERS = 2048;
export const MAX_NAME_LENGTH = 253;
export const MAX_TTL = 86_400;
