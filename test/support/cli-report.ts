// The shape of `netdiag speedtest --json`'s report as the suites read it, written from
// docs/command-line.md (not imported from the CLI: a test holds the output to the documented
// fields, not to whatever type the code happens to declare).
export interface CliBurst {
  peak_mbps: number;
  bytes: number;
  duration_ms: number;
}

export interface CliMeasured {
  streams: number;
  window_s: [number, number];
  steady: boolean;
  bytes: number;
  loaded_round_trips: number;
  resent_round_trips: number;
  rates_mbps: number[];
}

export interface CliReport {
  jitter_ms: number | null;
  streaming_quality: string;
  gaming_quality: string;
  video_call_quality: string;
  requests: number;
  rate_limit_waits: number;
  rate_limit_waited_ms: number;
  notes: string[];
  download_mbps: number | null;
  upload_mbps: number | null;
  download_burst: CliBurst | null;
  upload_burst: CliBurst | null;
  latency_ms: number | null;
  download_loaded_latency_ms: number | null;
  upload_loaded_latency_ms: number | null;
  loaded_latency_increase_ms: number | null;
  bufferbloat_grade: string | null;
  duration_ms: number;
  measured: { download: CliMeasured | null; upload: CliMeasured | null };
}

