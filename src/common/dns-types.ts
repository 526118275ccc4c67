/** The seven allowlisted record types (the API contract). */
export const DNS_TYPES = ['A', 'AAAA', 'CNAME', 'MX', 'NS', 'TXT', 'PTR'] as const;
export type DnsType = (typeof DNS_TYPES)[number];

export function isDnsType(value: string): value is DnsType {
  return (DNS_TYPES as readonly string[]).includes(value);
}

export type ResponseCode = 'no_error' | 'name_error' | 'refused' | 'server_failure' | 'other';

/** The four answer shapes of the spec (§2, DnsAnswer). */
export type DnsAnswer =
  | { type: 'A' | 'AAAA'; name: string; ttl_seconds: number; address: string }
  | { type: 'CNAME' | 'NS' | 'PTR'; name: string; ttl_seconds: number; target: string }
  | { type: 'MX'; name: string; ttl_seconds: number; preference: number; exchange: string }
  | { type: 'TXT'; name: string; ttl_seconds: number; value: string };

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
