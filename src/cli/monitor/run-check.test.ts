// The figures a monitor check reads out of each command's JSON: flat, by the names expectations
// use, whatever the shape the command prints.
import { describe, expect, it } from 'vitest';
import { figuresOf } from './run-check.js';

describe("a monitor check's figures", () => {
  it('a dns check: the answers sorted and joined (MX as preference and exchange), their count, the response code', () => {
    const json = {
      query: { name: 'example.test', type: 'A' },
      response_code: 'no_error',
      answers: [
        { name: 'example.test', type: 'A', ttl_seconds: 60, address: '192.0.2.9' },
        { name: 'example.test', type: 'A', ttl_seconds: 60, address: '192.0.2.10' },
        { name: 'example.test', type: 'MX', ttl_seconds: 60, preference: 10, exchange: 'mail.example.test' },
      ],
    };
    expect(figuresOf('dns', json)).toEqual({ response_code: 'no_error', answers: '10 mail.example.test, 192.0.2.10, 192.0.2.9', answer_count: 3 });
    expect(figuresOf('dns', { response_code: 'name_error', answers: [] })).toEqual({ response_code: 'name_error', answers: '', answer_count: 0 });
  });

  it("a latency check: the client's round trip and the worst region's; the client's alone when no region is available", () => {
    const row = (region: string, edge: number) => ({ region, name: region, edge_to_region_rtt_ms: edge, client_to_api_rtt_ms: 3.5 });
    expect(figuresOf('latency', { regions: [row('weur', 12.5), row('wnam', 140.25)] })).toEqual({ client_to_api_rtt_ms: 3.5, edge_to_region_rtt_ms: 140.25 });
    expect(figuresOf('latency', { client_to_api_rtt_ms: 2.25, regions: [] })).toEqual({ client_to_api_rtt_ms: 2.25, edge_to_region_rtt_ms: null });
    expect(figuresOf('latency', { regions: [] })).toEqual({ client_to_api_rtt_ms: null, edge_to_region_rtt_ms: null });
  });

  it("a families check: each family's state as `netdiag ip --both` gives it, and its time when it answered", () => {
    const json = { ipv4: { url: 'http://a', state: 'ok', ms: 4.2, ip: {}, error: null }, ipv6: { url: 'http://b', state: 'timeout', ms: 4000, ip: null, error: 'no answer' }, verdict: 'ipv4-only' };
    // The time of a family that did not answer is how long it took to fail, not a round trip: none.
    expect(figuresOf('families', json)).toEqual({ ipv4: 'ok', ipv6: 'timeout', ipv4_ms: 4.2, ipv6_ms: null });
  });

  it("a speed test's and an RPM test's figures are their JSON's top level", () => {
    const json = { download_mbps: 91.5, bufferbloat_grade: 'B' };
    expect(figuresOf('speedtest', json)).toBe(json);
  });
});
