// Mixed traffic as real callers send it, for the soak and slow-connection benchmarks: every
// route, a new public caller for most requests (behind the trusted loopback proxy), a few heavy
// callers who run into their limits, and bad input of every kind the spec names.
import { Pool } from 'undici';
import { publicCaller } from './lib.mjs';

const EVENT = (id) =>
  JSON.stringify({
    event: 'speed_test_completed',
    event_id: id,
    properties: { source: 'web', mode: 'full', download_mbps: 412.5, upload_mbps: 38.2, latency_ms: 11.4, jitter_ms: 1.2, streaming_quality: 'great' },
  });

const random = (n) => Math.floor(Math.random() * n);

const HEAVY = Array.from({ length: 20 }, publicCaller);
const NAMES = Array.from({ length: 50 }, (_, i) => `name${i}.bench.test`);

/** The mix: [weight, request maker]. Each maker returns undici request options. */
const MIX = [
  [20, () => ({ path: '/v1/ip' })],
  [5, () => ({ path: '/v1/ip', method: 'HEAD' })],
  [20, () => ({ path: `/v1/dns/resolve?name=${NAMES[random(NAMES.length)]}&type=A` })],
  [5, () => ({ path: `/v1/dns/resolve?name=miss${random(1e9)}.miss.bench.test&type=A` })],
  [5, () => ({ path: `/v1/dns/resolve?name=${encodeURIComponent(`bad name ${random(1e6)}!`)}&type=A` })],
  [2, () => ({ path: '/v1/dns/resolve?name=example.com&type=SOA' })],
  [10, () => ({ path: '/v1/events', method: 'POST', headers: { 'content-type': 'application/json' }, body: EVENT(crypto.randomUUID()) })],
  [3, () => ({ path: '/v1/events', method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"event":' })],
  [2, () => ({ path: '/v1/events', method: 'POST', headers: { 'content-type': 'application/json' }, body: 'x'.repeat(5000) })],
  [2, () => ({ path: '/v1/events', method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hello' })],
  [8, () => ({ path: '/v1/health' })],
  [4, () => ({ path: '/v1/speed-test/configuration' })],
  [4, () => ({ path: '/v1/latency/regions' })],
  [4, () => ({ path: '/v1/latency/regions/weur/probe' })],
  [1, () => ({ path: '/v1/latency/regions/mars/probe' })],
  [2, () => ({ path: `/nowhere/${random(1e6)}` })],
  [2, () => ({ path: '/v1/health', method: 'DELETE' })],
  [1, () => ({ path: '/v1/ip', method: 'OPTIONS' })],
];
const TOTAL = MIX.reduce((n, [w]) => n + w, 0);

function pick() {
  let at = random(TOTAL);
  for (const [weight, make] of MIX) {
    if (at < weight) return make();
    at -= weight;
  }
  return MIX[0][1]();
}

/**
 * Runs `concurrency` closed loops of mixed requests against `origin` until `until()` is false.
 * Calls `record(latencyMs, status)` per request (status 0 for a transport error).
 */
export async function runMix({ origin, concurrency, until, record }) {
  const pool = new Pool(origin, { connections: concurrency, pipelining: 1, headersTimeout: 30_000, bodyTimeout: 30_000 });
  const loop = async () => {
    while (until()) {
      const request = pick();
      // Nine in ten requests come from a caller never seen before; the rest from a few heavy ones.
      const caller = Math.random() < 0.9 ? publicCaller() : HEAVY[random(HEAVY.length)];
      const started = performance.now();
      try {
        const res = await pool.request({ method: 'GET', ...request, headers: { ...request.headers, 'x-forwarded-for': caller } });
        await res.body.dump();
        record(performance.now() - started, res.statusCode);
      } catch {
        record(performance.now() - started, 0);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, loop));
  await pool.close();
}

/** The p-th percentile of a list of numbers (sorted in place). */
export function percentile(values, p) {
  if (values.length === 0) return NaN;
  values.sort((a, b) => a - b);
  return values[Math.min(values.length - 1, Math.ceil(p * values.length) - 1)];
}

/**
 * The service's environment for mixed traffic: on loopback behind the trusted proxy, its DNS
 * upstream, a probe for one region and an analytics collector (each a started child with a port).
 */
export function mixedLoadEnv({ upstream, probe, collector }) {
  return {
    PORT: '0',
    HOST: '127.0.0.1',
    NETDIAG_DNS_UPSTREAM: `udp://127.0.0.1:${upstream.port}`,
    NETDIAG_TRUST_PROXY: 'loopback',
    NETDIAG_PROBES: `weur=http://127.0.0.1:${probe.port}`,
    NETDIAG_EVENTS_SINK: `http://127.0.0.1:${collector.port}/ingest`,
  };
}
