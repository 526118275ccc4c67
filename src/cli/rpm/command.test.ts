import { describe, expect, it } from 'vitest';
import type { RpmDirectionReport, RpmReport } from '../../common/speedtest/report.js';
import { rpmLines } from './command.js';

const direction: RpmDirectionReport = {
  rpm: 180,
  rpm_p90: 60,
  mbps: 18.4,
  connections: 16,
  connections_failed: 0,
  intervals: 12,
  stable: true,
  goodput_stable: true,
  responsiveness_stable: true,
  confidence: 'high',
  probes: { foreign: 80, self: 80, lost: 0 },
  components: { foreign_ms: 20.4, tcp_ms: 5.3, tls_ms: 48.1, http_ms: 7.9, self_ms: 612.5 },
  duration_ms: 12_000,
};

const report: RpmReport = {
  schema_version: 2,
  rpm: 190,
  rpm_p90: 62,
  rating: 'poor',
  download_rpm: 180,
  upload_rpm: 200,
  download_mbps: 18.4,
  upload_mbps: 18.1,
  stable: true,
  confidence: 'high',
  components: { foreign_ms: 18.2, tcp_ms: 5.3, tls_ms: 40.5, http_ms: 8.8, self_ms: null },
  download: direction,
  upload: { ...direction, rpm: 200 },
  bytes_moved: { down: 41_000_000, up: 39_000_000 },
};

describe('netdiag rpm as a table', () => {
  it("names what the figure is made of: a new connection's round trip with its parts, and a loaded connection's exchange ('-' for a kind not measured)", () => {
    const lines = new Map(rpmLines(report));
    expect(lines.get('responsiveness')).toBe('190 RPM (poor; confidence high)');
    expect(lines.get('download')).toBe('180 RPM, 18.4 Mbps (16 connections, stable, 160 probes)');
    expect(lines.get('made of')).toBe('new connections 18.2 ms a round trip (TCP 5.3, TLS 40.5, HTTP 8.8 ms), loaded connections - ms');
  });
});
