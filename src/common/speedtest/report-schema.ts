// The JSON Schemas (draft 2020-12) of `netdiag speedtest --json` and `netdiag rpm --json`, the
// source of openapi/speedtest-report.v1.schema.json and rpm-report.v2.schema.json (scripts/report-schemas.mjs writes them)
// and of the validators report-parse.ts's and report-read.ts's readers use (Ajv standalone code,
// scripts/generate.mjs), so the parsers and the published schemas cannot disagree. That the
// report's types name the same properties is checked at compile time in
// test/cli/report-schema.test.ts (SchemaAgreement).

/** The part of JSON Schema 2020-12 these schemas use. */
export interface JsonSchema {
  $schema?: string;
  $id?: string;
  title?: string;
  description?: string;
  type?: JsonType | readonly JsonType[];
  const?: string | number;
  enum?: readonly (string | null)[];
  minimum?: number;
  properties?: Readonly<Record<string, JsonSchema>>;
  required?: readonly string[];
  additionalProperties?: false;
  items?: JsonSchema;
  prefixItems?: readonly JsonSchema[];
  minItems?: number;
  maxItems?: number;
}
type JsonType = 'object' | 'array' | 'string' | 'number' | 'integer' | 'boolean' | 'null';

const count = { type: 'integer', minimum: 0 } as const;
const figure = { type: 'number', minimum: 0 } as const;
const figureOrNull = { type: ['number', 'null'], minimum: 0 } as const;
const QUALITY = { enum: ['bad', 'poor', 'average', 'good', 'great', 'pending'] } as const;
const CONFIDENCE = { enum: ['low', 'medium', 'high'] } as const;

/** An object whose every property is present (null where nothing was measured) and no other. */
function closed<P extends Record<string, JsonSchema>>(description: string, properties: P) {
  return { type: 'object', description, properties, required: Object.keys(properties) as (keyof P & string)[], additionalProperties: false } as const;
}

/** Either the object or null (a direction not in the plan, a burst the link did not give). */
const orNull = <S extends { type: 'object' }>(schema: S) => ({ ...schema, type: ['object', 'null'] }) as const;

const BURST_PROPERTIES = {
  peak_mbps: figure,
  bytes: count,
  duration_ms: count,
} as const satisfies Readonly<Record<string, JsonSchema>>;
const MEASURED_PROPERTIES = {
  streams: count,
  window_s: { type: 'array', description: 'The window the rate was taken over, seconds from the direction\'s start.', prefixItems: [figure, figure], minItems: 2, maxItems: 2 },
  steady: { type: 'boolean' },
  bytes: count,
  loaded_round_trips: count,
  resent_round_trips: count,
  rates_mbps: { type: 'array', items: figure },
} as const satisfies Readonly<Record<string, JsonSchema>>;
const bytesMoved = closed('The bytes the whole test moved from the server (down) and to it (up): every exchange (round trips, bursts, warm-up, the measured windows, a direction measured again), counted at its connections, headers included.', { down: count, up: count });
const measured = orNull(closed('What a direction\'s figure rests on; null when the plan has no such direction or no byte was counted.', MEASURED_PROPERTIES));
const burst = orNull(closed('The burst before the sustained rate; null when the link gave none.', BURST_PROPERTIES));

const SPEEDTEST_PROPERTIES = {
  schema_version: { const: 1, description: 'This schema\'s version: a change that could break a reader is a new version (and a new $id).' },
  mode: { type: 'string', description: 'The plan\'s mode, as the deployment names it (light, full).' },
  download_mbps: figureOrNull,
  upload_mbps: figureOrNull,
  download_burst: burst,
  upload_burst: burst,
  latency_ms: figureOrNull,
  jitter_ms: figureOrNull,
  download_loaded_latency_ms: figureOrNull,
  upload_loaded_latency_ms: figureOrNull,
  loaded_latency_increase_ms: figureOrNull,
  bufferbloat_grade: { enum: ['A+', 'A', 'B', 'C', 'D', 'F', null] },
  bufferbloat_meaning: { type: ['string', 'null'] },
  packet_loss_percent: { type: ['number', 'null'], minimum: 0 },
  packet_loss: orNull(closed('The datagrams sent and received through the TURN server; null when loss was not measured.', { server: { type: 'string' }, sent: count, received: count })),
  streaming_quality: QUALITY,
  gaming_quality: QUALITY,
  video_call_quality: QUALITY,
  duration_ms: count,
  requests: count,
  bytes_moved: bytesMoved,
  rate_limit_waits: count,
  rate_limit_waited_ms: count,
  measured: closed('Each direction\'s basis.', { download: measured, upload: measured }),
  notes: { type: 'array', items: { type: 'string' } },
  share_link: { type: 'string', description: 'With --share only: the page\'s link carrying the result.' },
  server: closed('With --server only: the server measured against, its name in the list (null for a URL given, or the deployment itself when its list is empty) and, when --server auto chose it, the round trip that did (ms; null otherwise).', { name: { type: ['string', 'null'] }, url: { type: 'string' }, round_trip_ms: figureOrNull }),
} as const satisfies Readonly<Record<string, JsonSchema>>;

/** `netdiag speedtest --json`: every property but share_link and server is always there. */
export const SPEEDTEST_REPORT_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $id: 'urn:netdiag:speedtest-report:v1',
  title: 'netdiag speedtest --json',
  type: 'object',
  properties: SPEEDTEST_PROPERTIES,
  required: (Object.keys(SPEEDTEST_PROPERTIES) as (keyof typeof SPEEDTEST_PROPERTIES)[]).filter((k) => k !== 'share_link' && k !== 'server'),
  additionalProperties: false,
} as const satisfies JsonSchema;

/** What a figure is made of, so a disagreement with another client can be traced. */
const RPM_COMPONENTS = closed('Each probe kind\'s trimmed mean (the fastest 95%) over the probes the figure rests on, ms: foreign_ms a new connection\'s probe per round trip (its whole time over three: TCP, TLS, HTTP), tcp_ms, tls_ms and http_ms its parts, self_ms a loaded connection\'s exchange.', {
  foreign_ms: figureOrNull,
  tcp_ms: figureOrNull,
  tls_ms: figureOrNull,
  http_ms: figureOrNull,
  self_ms: figureOrNull,
});

const RPM_DIRECTION_PROPERTIES = {
  rpm: figureOrNull,
  rpm_p90: figureOrNull,
  mbps: figure,
  connections: count,
  connections_failed: { ...count, description: 'Load-generating connections after the first that could not be opened (a handshake lost to the load), tried again the next second.' },
  intervals: count,
  stable: { type: 'boolean' },
  goodput_stable: { type: 'boolean' },
  responsiveness_stable: { type: 'boolean' },
  confidence: CONFIDENCE,
  probes: closed('The probes the figure rests on, and the rounds given up (no answer in 10 s, or a new connection that could not be made).', { foreign: count, self: count, lost: count }),
  components: RPM_COMPONENTS,
  duration_ms: count,
} as const satisfies Readonly<Record<string, JsonSchema>>;
const rpmDirection = closed('One direction of the test.', RPM_DIRECTION_PROPERTIES);

const RPM_PROPERTIES = {
  schema_version: { const: 2, description: 'This schema\'s version: a change that could break a reader is a new version (and a new $id). 2: the draft\'s formula over both directions\' probes, and components.' },
  rpm: figureOrNull,
  rpm_p90: figureOrNull,
  rating: { enum: ['poor', 'fair', 'good', 'excellent', null] },
  download_rpm: figureOrNull,
  upload_rpm: figureOrNull,
  download_mbps: figure,
  upload_mbps: figure,
  stable: { type: 'boolean' },
  confidence: CONFIDENCE,
  components: RPM_COMPONENTS,
  download: rpmDirection,
  upload: rpmDirection,
  bytes_moved: bytesMoved,
} as const satisfies Readonly<Record<string, JsonSchema>>;

/** `netdiag rpm --json`: every property always there. */
export const RPM_REPORT_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $id: 'urn:netdiag:rpm-report:v2',
  title: 'netdiag rpm --json',
  ...closed('Responsiveness under working conditions, each direction and together.', RPM_PROPERTIES),
} as const satisfies JsonSchema;

/** The figures a kept speed-test run is judged and shown by (SpeedTestFigures in report.ts). */
export const FIGURE_NAMES = ['mode', 'download_mbps', 'upload_mbps', 'latency_ms', 'jitter_ms', 'download_loaded_latency_ms', 'upload_loaded_latency_ms', 'loaded_latency_increase_ms', 'bufferbloat_grade', 'packet_loss_percent'] as const satisfies readonly (keyof typeof SPEEDTEST_PROPERTIES)[];

/** A kept run (a monitor's of any version, an imported page result) has these figures and may have more. */
export const SPEEDTEST_FIGURES_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $id: 'urn:netdiag:speedtest-figures',
  type: 'object',
  properties: Object.fromEntries(FIGURE_NAMES.map((name) => [name, SPEEDTEST_PROPERTIES[name]])),
  required: FIGURE_NAMES,
} as const satisfies JsonSchema;
