import { EVENT_NAMES } from '../../common/event-names.js';

/**
 * One step of a measurement plan, as the contract defines the configuration. The plans keep the
 * step sizes of the speed-test library's default sequence (@cloudflare/speedtest: a latency probe, then download
 * and upload ramps), without its packet-loss step, which the v1 schema has no measurement type
 * for. What the page and `netdiag speedtest` take from a plan (docs/design.md,
 * "Measuring a link under working conditions"): how many idle round trips to time, which
 * directions to measure and, with `limits.max_bytes_per_request`, the largest transfer; each
 * direction is then loaded by parallel streams until its rate is steady, by the mode's profile
 * (src/common/speedtest/working.ts), not by the steps' sizes and counts. A client of another
 * make may still run the steps as the speed-test library does.
 */
interface Measurement {
  type: 'latency' | 'download' | 'upload';
  packet_count?: number;
  bytes_per_request?: number;
  request_count?: number;
}

const latency = (packets: number): Measurement => ({ type: 'latency', packet_count: packets });
const download = (bytes: number, count: number): Measurement => ({
  type: 'download',
  bytes_per_request: bytes,
  request_count: count,
});
const upload = (bytes: number, count: number): Measurement => ({
  type: 'upload',
  bytes_per_request: bytes,
  request_count: count,
});

/** The speed-test library's first rounds: about 10 MB down and 7 MB up, up to 1 MB per request. */
const LIGHT: Measurement[] = [
  latency(1),
  download(100_000, 1),
  latency(20),
  download(100_000, 9),
  download(1_000_000, 8),
  upload(100_000, 8),
  upload(1_000_000, 6),
];

/**
 * The default test's plan: 21 idle round trips, then each direction's ladder of transfer sizes
 * growing at most 2.5 times a step, up to 250 MB down and 100 MB up, which the speed-test targets
 * take as their largest transfer (MAX_BYTES_PER_REQUEST). The page and the command line load each
 * direction for at most 10 s, so the whole test with idle latency and packet loss ends within
 * about 25 s on any link.
 */
const FULL: Measurement[] = [
  latency(1),
  download(100_000, 1),
  latency(20),
  download(100_000, 4),
  download(250_000, 2),
  download(500_000, 2),
  download(1_000_000, 2),
  download(2_500_000, 2),
  download(5_000_000, 3),
  download(10_000_000, 3),
  download(25_000_000, 2),
  download(50_000_000, 2),
  download(100_000_000, 2),
  download(250_000_000, 2),
  upload(100_000, 4),
  upload(250_000, 2),
  upload(500_000, 2),
  upload(1_000_000, 2),
  upload(2_500_000, 2),
  upload(5_000_000, 3),
  upload(10_000_000, 3),
  upload(25_000_000, 2),
  upload(50_000_000, 2),
  upload(100_000_000, 2),
];

/** The largest single transfer of a plan. */
const largest = (plan: Measurement[]) => Math.max(...plan.map((m) => m.bytes_per_request ?? 0));

/**
 * What the speed-test targets send or read in one request at most: the plans' largest transfer,
 * so the configuration never asks for more than the server allows.
 */
export const MAX_BYTES_PER_REQUEST = largest(FULL);

export const SPEED_TEST_CONFIGURATION = {
  configuration_version: 1,
  execution: 'client',
  engine: '@provider/speedtest',
  results_persisted_by_service: false,
  // Units of the analytics properties a client reports (the API contract, AnalyticsProperties).
  metric_units: {
    download_mbps: 'megabits_per_second',
    upload_mbps: 'megabits_per_second',
    latency_ms: 'milliseconds',
    jitter_ms: 'milliseconds',
    duration_ms: 'milliseconds',
    bytes_per_request: 'bytes',
  },
  // Bounds the service enforces on what a client sends back (the API contract).
  limits: {
    max_bytes_per_request: MAX_BYTES_PER_REQUEST,
    max_test_duration_ms: 3_600_000,
    max_download_mbps: 1_000_000,
    max_upload_mbps: 1_000_000,
    max_latency_ms: 600_000,
    max_jitter_ms: 600_000,
    analytics_body_max_bytes: 4096,
    analytics_events_per_minute: 60,
    tool_version_max_length: 40,
  },
  modes: [
    {
      id: 'light',
      description: 'Quick check: latency, then each direction loaded by four streams for up to 5 s, its rate taken over a 2.5 s window, with latency under load each way.',
      measurements: LIGHT,
    },
    {
      id: 'full',
      description: 'Full test (the default): latency, then each direction loaded by four streams until its rate has been steady for 5 s (at most 10 s), with latency under load each way; at most about 25 s on any link.',
      measurements: FULL,
    },
  ],
  analytics: {
    schema_version: 1,
    events: EVENT_NAMES,
    event_id: 'random_uuid_per_test',
    endpoint: '/v1/events',
  },
} as const;
