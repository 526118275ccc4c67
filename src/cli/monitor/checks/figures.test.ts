// The figures a monitor check reads out of each command's JSON: flat, by the names expectations
// use, whatever the shape the command prints.
import { describe, expect, it } from 'vitest';
import type { RpmDirectionReport, RpmReport, SpeedTestReport } from '../../../common/speedtest/report.js';
import { bytesMoved, readFigures } from './kinds.js';

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
    expect(readFigures('dns', json)).toEqual({ response_code: 'no_error', answers: '10 mail.example.test, 192.0.2.10, 192.0.2.9', answer_count: 3 });
    expect(readFigures('dns', { response_code: 'name_error', answers: [] })).toEqual({ response_code: 'name_error', answers: '', answer_count: 0 });
  });

  it("a latency check: the client's round trip and the worst region's; the client's alone when no region is available", () => {
    const row = (region: string, edge: number) => ({ region, name: region, edge_to_region_rtt_ms: edge, client_to_api_rtt_ms: 3.5 });
    expect(readFigures('latency', { regions: [row('weur', 12.5), row('wnam', 140.25)] })).toEqual({ client_to_api_rtt_ms: 3.5, edge_to_region_rtt_ms: 140.25 });
    expect(readFigures('latency', { client_to_api_rtt_ms: 2.25, regions: [] })).toEqual({ client_to_api_rtt_ms: 2.25, edge_to_region_rtt_ms: null });
    expect(readFigures('latency', { regions: [] })).toEqual({ client_to_api_rtt_ms: null, edge_to_region_rtt_ms: null });
  });

  it("a families check: each family's state as `netdiag ip --both` gives it, and its time when it answered", () => {
    const json = { ipv4: { url: 'http://a', state: 'ok', ms: 4.2, ip: {}, error: null }, ipv6: { url: 'http://b', state: 'timeout', ms: 4000, ip: null, error: 'no answer' }, verdict: 'ipv4-only' };
    // The time of a family that did not answer is how long it took to fail, not a round trip: none.
    expect(readFigures('families', json)).toEqual({ ipv4: 'ok', ipv6: 'timeout', ipv4_ms: 4.2, ipv6_ms: null });
  });

  it("a speed test's: the report's figures and its mode, the rest of the report left out; a report without one of them is said, naming it", () => {
    const figures = { mode: 'light', download_mbps: 91.5, upload_mbps: 20.25, latency_ms: 4.5, jitter_ms: 0.5, download_loaded_latency_ms: 30, upload_loaded_latency_ms: null, loaded_latency_increase_ms: 25.5, bufferbloat_grade: 'B', packet_loss_percent: null } as const;
    const report: SpeedTestReport = {
      schema_version: 1,
      ...figures,
      download_burst: null,
      upload_burst: null,
      bufferbloat_meaning: null,
      packet_loss: null,
      streaming_quality: 'good',
      gaming_quality: 'average',
      video_call_quality: 'good',
      duration_ms: 9000,
      requests: 210,
      bytes_moved: { down: 60_500_000, up: 14_250_000 },
      rate_limit_waits: 0,
      rate_limit_waited_ms: 0,
      measured: { download: null, upload: null },
      notes: ['packet loss not measured'],
    };
    expect(readFigures('speedtest', { ...report })).toEqual(figures);
    const withoutMode: Record<string, unknown> = { ...report };
    delete withoutMode.mode;
    expect(readFigures('speedtest', withoutMode)).toBe("the command's --json is not a speed test's report: mode is missing");
    // The whole report is checked, not only its figures: the command is the monitor's own version.
    expect(readFigures('speedtest', { ...figures })).toMatch(/^the command's --json is not a speed test's report: \w+ is missing$/);
    // The whole run's bytes, each way, for the data budget; none from a report that does not carry them.
    expect(bytesMoved('speedtest', { ...report })).toEqual({ down: 60_500_000, up: 14_250_000 });
    expect(bytesMoved('speedtest', { ...figures })).toBeNull();
  });

  it("an RPM test's: the report's rpm and rpm_p90, the rest left out; a report that is not one is said, naming what is wrong", () => {
    const direction: RpmDirectionReport = { rpm: 900, rpm_p90: 640, mbps: 95.5, connections: 4, connections_failed: 0, intervals: 12, stable: true, goodput_stable: true, responsiveness_stable: true, confidence: 'high', probes: { foreign: 40, self: 38, lost: 0 }, components: { foreign_ms: 12.5, tcp_ms: 11, tls_ms: 12, http_ms: 14.5, self_ms: 60 }, duration_ms: 12_000 };
    const report: RpmReport = { schema_version: 2, rpm: 880, rpm_p90: 610, rating: 'good', download_rpm: 900, upload_rpm: 860, download_mbps: 95.5, upload_mbps: 20.5, stable: true, confidence: 'high', components: direction.components, download: direction, upload: { ...direction, rpm: 860, rpm_p90: 580 }, bytes_moved: { down: 410_000_000, up: 95_000_000 } };
    expect(readFigures('rpm', { ...report })).toEqual({ rpm: 880, rpm_p90: 610 });
    expect(bytesMoved('rpm', { ...report })).toEqual({ down: 410_000_000, up: 95_000_000 });
    expect(bytesMoved('rpm', { ...report, bytes_moved: { down: -1, up: 0 } })).toBeNull();
    expect(readFigures('rpm', { ...report, rpm: 'fast' })).toMatch(/^the command's --json is not an RPM test's report: rpm /);
  });
});
