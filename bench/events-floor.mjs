// node bench/events-floor.mjs --serve <collector port>   (started by `npm run bench`, route `events`)
//
// The floor under the events route: a hand-written node:http server that does what the intake
// must and nothing more, so the service's cost can be set against the work itself:
//   - the caller from X-Forwarded-For and a keyed hash of it (the rate limit's key; no window kept),
//   - the body read from its events, JSON.parse,
//   - the event checked field by field as the contract declares it (name, UUID, each declared
//     property's type and range; undeclared properties dropped),
//   - the event and its receive time queued, and delivered to the collector as NDJSON in batches
//     (500 events or 200 ms, one POST in flight, through undici like the service),
//   - 202 with the service's headers and envelope.
// No router, no limiter window, no generated validator, no bounded-queue bookkeeping, no retries.
import { createServer } from 'node:http';
import { createHmac, randomUUID } from 'node:crypto';
import { request } from 'undici';
import { serviceLikeHeaders } from './lib.mjs';

const collector = `http://127.0.0.1:${process.argv[3]}/ingest`;
const UUID = /^[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}$/i;
const EVENTS = new Set(['speed_test_started', 'speed_test_completed', 'speed_test_failed', 'speed_test_shared']);
const SOURCES = new Set(['web', 'cli', 'terraform', 'desktop', 'mobile', 'api']);
const QUALITY = new Set(['bad', 'poor', 'average', 'good', 'great', 'pending']);
const REASONS = new Set(['engine_error', 'engine_load_error', 'network_error', 'cancelled', 'timeout']);
const number = (max) => (v) => typeof v === 'number' && v >= 0 && v <= max;
const oneOf = (set) => (v) => set.has(v);
const DECLARED = {
  source: oneOf(SOURCES),
  mode: (v) => v === 'light' || v === 'full',
  duration_ms: number(3_600_000),
  download_mbps: number(1_000_000),
  upload_mbps: number(1_000_000),
  latency_ms: number(600_000),
  jitter_ms: number(600_000),
  streaming_quality: oneOf(QUALITY),
  gaming_quality: oneOf(QUALITY),
  video_call_quality: oneOf(QUALITY),
  failure_reason: oneOf(REASONS),
  tool_version: (v) => typeof v === 'string' && v.length <= 40,
};

/** The declared properties, each checked; null when one fails or `source` is missing. */
function propertiesOf(input) {
  if (typeof input !== 'object' || input === null || !DECLARED.source(input.source)) return null;
  const out = {};
  for (const key in input) {
    const check = DECLARED[key];
    if (check === undefined) continue;
    if (!check(input[key])) return null;
    out[key] = input[key];
  }
  return out;
}

let queue = [];
let inFlight = false;
let timer;
const headers = { 'content-type': 'application/x-ndjson' };
async function flush() {
  clearTimeout(timer);
  timer = undefined;
  if (inFlight || queue.length === 0) return;
  inFlight = true;
  const batch = queue.slice(0, 500);
  queue = queue.slice(batch.length);
  try {
    const res = await request(collector, { method: 'POST', headers, body: batch.map((e) => JSON.stringify(e)).join('\n') + '\n' });
    await res.body.dump();
  } catch {
    // The floor does not retry: a lost batch is the service's problem to solve, not the floor's.
  }
  inFlight = false;
  if (queue.length >= 500) void flush();
  else if (queue.length > 0) timer ??= setTimeout(flush, 200);
}

const server = createServer((req, res) => {
  createHmac('sha256', 'a-secret-of-at-least-thirty-two-characters').update(String(req.headers['x-forwarded-for'])).digest('base64url');
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    let event;
    try {
      event = JSON.parse((chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)).toString('utf8'));
    } catch {
      res.writeHead(400).end();
      return;
    }
    const properties = typeof event === 'object' && event !== null && EVENTS.has(event.event) && typeof event.event_id === 'string' && UUID.test(event.event_id) ? propertiesOf(event.properties) : null;
    if (properties === null) {
      res.writeHead(400).end();
      return;
    }
    queue.push({ event: event.event, event_id: event.event_id, properties, received_at: new Date().toISOString() });
    if (queue.length >= 500) void flush();
    else timer ??= setTimeout(flush, 200);
    const id = randomUUID();
    const body = `{"data":{"accepted":true},"meta":{"api_version":"v1","request_id":"${id}","requested_at":"${new Date().toISOString()}"}}`;
    res.writeHead(202, serviceLikeHeaders(id, body));
    res.end(body);
  });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${server.address().port}\n`));
process.on('SIGTERM', () => server.close(() => void flush().then(() => process.exit(0))));
