// The published JSON Schemas of `netdiag speedtest --json` and `netdiag rpm --json`
// (openapi/*-report.v1.schema.json): written from their source, valid draft 2020-12 for ajv, in
// step with the TypeScript types (a typed fixture of each must validate), closed (a property
// added to the output and not to the schema fails), and what the built CLI prints against the
// real server on loopback validates. rpm.test.ts validates the rpm run it already makes.
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { readRpmReport, readSpeedTestReport } from '../../src/common/speedtest/report-parse.js';
import { readSpeedTestFigures } from '../../src/common/speedtest/report-read.js';
import { type BurstReport, type BytesMovedReport, type MeasuredReport, type RpmDirectionReport, type RpmReport, type SpeedTestReport } from '../../src/common/speedtest/report.js';
import { RPM_REPORT_SCHEMA, SPEEDTEST_REPORT_SCHEMA, type JsonSchema } from '../../src/common/speedtest/report-schema.js';
import { runCli, serveCli } from '../support/process.js';

// The types and the schemas name the same properties at every level: a property in one and not
// the other is a compile error here (npm run typecheck), naming it.
type SameKeys<A, B> = [Exclude<keyof A, keyof B>, Exclude<keyof B, keyof A>] extends [never, never] ? true : { onlyInType: Exclude<keyof A, keyof B>; onlyInSchema: Exclude<keyof B, keyof A> };
type Speed = typeof SPEEDTEST_REPORT_SCHEMA.properties;
type RpmProperties = typeof RPM_REPORT_SCHEMA.properties;
type SchemaAgreement = [
  SameKeys<SpeedTestReport, Speed>,
  SameKeys<BurstReport, Speed['download_burst']['properties']>,
  SameKeys<MeasuredReport, Speed['measured']['properties']['download']['properties']>,
  SameKeys<NonNullable<SpeedTestReport['packet_loss']>, Speed['packet_loss']['properties']>,
  SameKeys<SpeedTestReport['measured'], Speed['measured']['properties']>,
  SameKeys<RpmReport, RpmProperties>,
  SameKeys<RpmDirectionReport, RpmProperties['download']['properties']>,
  SameKeys<RpmDirectionReport['probes'], RpmProperties['download']['properties']['probes']['properties']>,
  SameKeys<BytesMovedReport, Speed['bytes_moved']['properties']>,
  SameKeys<BytesMovedReport, RpmProperties['bytes_moved']['properties']>,
];
const AGREEMENT: SchemaAgreement = [true, true, true, true, true, true, true, true, true, true];

const published = (name: string) => JSON.parse(readFileSync(new URL(`../../openapi/${name}`, import.meta.url), 'utf8')) as JsonSchema;
const SPEEDTEST_FILE = published('speedtest-report.v1.schema.json');
const RPM_FILE = published('rpm-report.v2.schema.json');

const ajv = new Ajv2020({ allErrors: true, strict: true });
const validSpeedTest = ajv.compile(SPEEDTEST_FILE);
const validRpm = ajv.compile(RPM_FILE);

/** Every object with nothing null: each nested schema is used. */
const SPEEDTEST_FIXTURE: SpeedTestReport = {
  schema_version: 1,
  mode: 'full',
  download_mbps: 94.12,
  upload_mbps: 18.5,
  download_burst: { peak_mbps: 180.3, bytes: 3_800_000, duration_ms: 160 },
  upload_burst: { peak_mbps: 40, bytes: 1_000_000, duration_ms: 200 },
  latency_ms: 11.2,
  jitter_ms: 0.8,
  download_loaded_latency_ms: 48.5,
  upload_loaded_latency_ms: 71.25,
  loaded_latency_increase_ms: 60.05,
  bufferbloat_grade: 'C',
  bufferbloat_meaning: 'a busy line makes calls lag and games hard to play',
  packet_loss_percent: 0.5,
  packet_loss: { server: 'turn.example.test:3478', sent: 200, received: 199 },
  streaming_quality: 'good',
  gaming_quality: 'average',
  video_call_quality: 'pending',
  duration_ms: 20_119,
  requests: 270,
  bytes_moved: { down: 81_000_000, up: 16_500_000 },
  rate_limit_waits: 0,
  rate_limit_waited_ms: 0,
  measured: {
    download: { streams: 4, window_s: [5, 10], steady: true, bytes: 58_800_000, loaded_round_trips: 37, resent_round_trips: 1, rates_mbps: [90.1, 94.3] },
    upload: { streams: 4, window_s: [5, 9.75], steady: false, bytes: 11_000_000, loaded_round_trips: 33, resent_round_trips: 0, rates_mbps: [18.2] },
  },
  notes: ['the upload rate did not settle within 10 s, so its figure is the average of the last 4.8 s'],
  share_link: 'http://127.0.0.1:8080/#r=1~t5x7k0~f~1o3j2k~b0ap4~8p0~ma~11e8~1krq~32~~',
  server: { name: 'fra', url: 'https://fra.example.net', round_trip_ms: 6.2 },
};

const RPM_FIXTURE: RpmReport = {
  schema_version: 2,
  rpm: 950,
  rpm_p90: 700,
  rating: 'good',
  download_rpm: 900,
  upload_rpm: 1000,
  download_mbps: 420.5,
  upload_mbps: 380,
  stable: true,
  confidence: 'high',
  components: { foreign_ms: 11, tcp_ms: 10, tls_ms: 11, http_ms: 12, self_ms: 55 },
  download: { rpm: 900, rpm_p90: 650, mbps: 420.5, connections: 8, connections_failed: 1, intervals: 9, stable: true, goodput_stable: true, responsiveness_stable: true, confidence: 'high', probes: { foreign: 40, self: 42, lost: 0 }, components: { foreign_ms: 12.5, tcp_ms: 11, tls_ms: 12, http_ms: 14.5, self_ms: 60 }, duration_ms: 9_100 },
  upload: { rpm: 1000, rpm_p90: 750, mbps: 380, connections: 8, connections_failed: 1, intervals: 11, stable: true, goodput_stable: true, responsiveness_stable: true, confidence: 'high', probes: { foreign: 50, self: 51, lost: 1 }, components: { foreign_ms: 12.5, tcp_ms: 11, tls_ms: 12, http_ms: 14.5, self_ms: 60 }, duration_ms: 11_200 },
  bytes_moved: { down: 530_000_000, up: 480_000_000 },
};

/** Each object schema in `schema`, with where it is. */
function objectSchemas(schema: JsonSchema, path = '$'): [string, JsonSchema][] {
  const own: [string, JsonSchema][] = schema.properties === undefined ? [] : [[path, schema]];
  const nested = Object.entries(schema.properties ?? {}).flatMap(([key, s]) => objectSchemas(s, `${path}.${key}`));
  return [...own, ...nested];
}

const withExtra = <T extends object>(report: T): T & { surprise: number } => ({ ...report, surprise: 1 });

describe('the --json report schemas', () => {
  it('the published files are what their source (src/common/speedtest/report-schema.ts) gives: run node scripts/report-schemas.mjs after changing it', () => {
    expect(SPEEDTEST_FILE).toEqual(SPEEDTEST_REPORT_SCHEMA);
    expect(RPM_FILE).toEqual(RPM_REPORT_SCHEMA);
  });

  it('are draft 2020-12 with a versioned $id (speedtest 1, rpm 2), and every object in them is closed and requires each property it names (share_link and server the optional ones, at the top)', () => {
    // The rpm report is at version 2: its figure follows the draft's formula and carries its components.
    for (const [file, version] of [[SPEEDTEST_FILE, 1], [RPM_FILE, 2]] as const) {
      expect(file.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
      expect(file.$id).toMatch(new RegExp(`:v${String(version)}$`));
      expect(file.properties?.schema_version).toMatchObject({ const: version });
      for (const [where, s] of objectSchemas(file)) {
        expect(s.additionalProperties, where).toBe(false);
        expect([...(s.required ?? [])].sort(), where).toEqual(Object.keys(s.properties ?? {}).filter((k) => where !== '$' || (k !== 'share_link' && k !== 'server')).sort());
      }
    }
  });

  it('a typed fixture of each report validates, with ajv and with the parser the monitor reads runs through (the types name what the schemas name: SchemaAgreement)', () => {
    expect(new Set<unknown>(AGREEMENT)).toEqual(new Set([true]));
    expect(validSpeedTest(SPEEDTEST_FIXTURE), JSON.stringify(validSpeedTest.errors)).toBe(true);
    expect(validRpm(RPM_FIXTURE), JSON.stringify(validRpm.errors)).toBe(true);
    expect(readSpeedTestReport(SPEEDTEST_FIXTURE)).toEqual({ ok: true, report: SPEEDTEST_FIXTURE });
    expect(readRpmReport(RPM_FIXTURE)).toEqual({ ok: true, report: RPM_FIXTURE });
  });

  it('a property the schema does not name fails, at the top and nested, and the parser names it', () => {
    expect(validSpeedTest(withExtra(SPEEDTEST_FIXTURE))).toBe(false);
    expect(readSpeedTestReport(withExtra(SPEEDTEST_FIXTURE))).toEqual({ ok: false, reason: 'surprise is not a property this version knows' });
    const nested = { ...SPEEDTEST_FIXTURE, measured: { ...SPEEDTEST_FIXTURE.measured, download: withExtra(SPEEDTEST_FIXTURE.measured.download ?? {}) } };
    expect(validSpeedTest(nested)).toBe(false);
    expect(readSpeedTestReport(nested)).toEqual({ ok: false, reason: 'measured.download.surprise is not a property this version knows' });
    expect(validRpm(withExtra(RPM_FIXTURE))).toBe(false);
    expect(readRpmReport({ ...RPM_FIXTURE, upload: { ...RPM_FIXTURE.upload, probes: withExtra(RPM_FIXTURE.upload.probes) } })).toEqual({ ok: false, reason: 'upload.probes.surprise is not a property this version knows' });
  });

  it('the parser says what is wrong, naming the property, and never throws', () => {
    const without: Record<string, unknown> = { ...SPEEDTEST_FIXTURE };
    delete without.latency_ms;
    expect(readSpeedTestReport(without)).toEqual({ ok: false, reason: 'latency_ms is missing' });
    expect(readSpeedTestReport({ ...SPEEDTEST_FIXTURE, download_mbps: '94' })).toEqual({ ok: false, reason: 'download_mbps is string, not number or null' });
    expect(readSpeedTestReport({ ...SPEEDTEST_FIXTURE, bufferbloat_grade: 'E' })).toEqual({ ok: false, reason: 'bufferbloat_grade is "E", not one of "A+", "A", "B", "C", "D", "F", null' });
    expect(readSpeedTestReport({ ...SPEEDTEST_FIXTURE, schema_version: 2 })).toEqual({ ok: false, reason: 'schema_version is 2, not 1' });
    expect(readRpmReport({ ...RPM_FIXTURE, download: { ...RPM_FIXTURE.download, duration_ms: 1.5 } })).toEqual({ ok: false, reason: 'download.duration_ms is number, not integer' });
    expect(readSpeedTestReport({ ...SPEEDTEST_FIXTURE, measured: { ...SPEEDTEST_FIXTURE.measured, upload: { ...SPEEDTEST_FIXTURE.measured.upload, window_s: [5] } } })).toEqual({ ok: false, reason: 'measured.upload.window_s has 1 items, fewer than 2' });
    for (const nonsense of [null, 'report', 42, []]) expect(readSpeedTestReport(nonsense)).toMatchObject({ ok: false });
    expect(readRpmReport(undefined)).toMatchObject({ ok: false });
  });

  it('a kept run is read for its figures only: other properties and an older report without schema_version are fine', () => {
    const older: Record<string, unknown> = { ...SPEEDTEST_FIXTURE, from_a_later_version: true };
    delete older.schema_version;
    const read = readSpeedTestFigures(older);
    expect(read.ok && Object.keys(read.report).sort()).toEqual(['bufferbloat_grade', 'download_loaded_latency_ms', 'download_mbps', 'jitter_ms', 'latency_ms', 'loaded_latency_increase_ms', 'mode', 'packet_loss_percent', 'upload_loaded_latency_ms', 'upload_mbps']);
    expect(readSpeedTestFigures({ ...SPEEDTEST_FIXTURE, latency_ms: -1 })).toEqual({ ok: false, reason: 'latency_ms is -1, below 0' });
  });
});

describe('netdiag speedtest --json against the real server on loopback', () => {
  it('a light test with --share prints a report that validates against the published schema, share_link included', async () => {
    const server = await serveCli({ NETDIAG_RATE_LIMITS: 'speedtest=100000', NETDIAG_EVENTS_SINK: 'none' });
    try {
      const run = await runCli(['speedtest', '--mode', 'light', '--json', '--share', '--no-analytics', '--no-packet-loss', '--url', `http://127.0.0.1:${String(server.port)}`], {}, 60_000);
      expect(run.code, run.stderr).toBe(0);
      const printed = JSON.parse(run.stdout) as unknown;
      expect(validSpeedTest(printed), JSON.stringify(validSpeedTest.errors)).toBe(true);
      expect(readSpeedTestReport(printed)).toMatchObject({ ok: true, report: { schema_version: 1, mode: 'light', share_link: expect.stringContaining('#r=1~') as unknown } });
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  }, 60_000);
});
