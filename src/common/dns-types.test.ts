// The record types' one list (src/common/dns-types.ts) held to the API contract: the same types
// in the same order as openapi.yaml's DnsType, each in the answer schema of its shape, and the
// wire TYPE numbers of RFC 1035 §3.2.2 and RFC 3596 §2.1.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { DNS_TYPES, RECORD_TYPES } from './dns-types.js';

interface Schema {
  enum?: string[];
  const?: string;
  properties?: Record<string, Schema>;
}
const schemas = (parse(readFileSync(new URL('../../openapi/openapi.yaml', import.meta.url), 'utf8')) as { components: { schemas: Record<string, Schema> } }).components.schemas;
const SHAPE_SCHEMAS = { address: 'DnsAddressAnswer', target: 'DnsTargetAnswer', exchange: 'DnsMailExchangeAnswer', text: 'DnsTextAnswer' } as const;

describe('the record types netdiag resolves', () => {
  it("are the contract's DnsType enum, in its order", () => {
    expect([...DNS_TYPES]).toEqual(schemas.DnsType?.enum);
  });

  it('each answers in the schema of its shape', () => {
    for (const type of DNS_TYPES) {
      const schema = schemas[SHAPE_SCHEMAS[RECORD_TYPES[type].shape]]?.properties?.type;
      expect({ type, in: schema?.enum?.includes(type) === true || schema?.const === type }).toEqual({ type, in: true });
    }
  });

  it('carry their TYPE numbers from the RFCs', () => {
    expect(Object.fromEntries(DNS_TYPES.map((t) => [t, RECORD_TYPES[t].code]))).toEqual({ A: 1, NS: 2, CNAME: 5, PTR: 12, MX: 15, TXT: 16, AAAA: 28 });
  });
});
