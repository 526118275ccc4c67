// Prometheus metrics on Node (NETDIAG_METRICS_PORT), through prom-client. Counters and
// histograms are pushed by the app and the resolver as things happen; gauges (cache size,
// circuit, limiter store, events queue, probes) are read from the running objects at scrape
// time, so nothing is paid for them per request. No label ever holds an address, a name asked
// about, a User-Agent or a body: routes are patterns, methods a fixed set, regions and
// operations fixed lists.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ResolverObserver, ResolverRuntime } from '../../../engines/dns/resolver.js';
import { HttpEventSink } from '../../../engines/events/http-sink.js';
import type { EventSink } from '../../../core/ports/event-sink.js';
import type { Metrics } from '../../../core/ports/metrics.js';
import type { RegionId } from '../../../common/regions.js';
import type { NodeLimiter } from './limiter-store/limiter.js';
import type { NodeProbes } from './probe-client.js';
import { OPERATIONS } from '../../../core/ports/limiter-store.js';

/** Request durations from a cached answer (tens of µs) to a slow upstream or upload (seconds). */
const REQUEST_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Upstream and probe round trips: a LAN resolver's 0.2 ms to a deadline's seconds. */
const RTT_BUCKETS = [0.0002, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** What the metrics read at scrape time, once the services exist. */
interface Observed {
  dns: ResolverRuntime;
  limiter: NodeLimiter;
  events: EventSink;
  probes: NodeProbes;
}

export interface NodeMetrics {
  registry: Registry;
  /** The core's port (requests, 429s). */
  metrics: Metrics;
  /** The resolver's outcomes. */
  resolver: ResolverObserver;
  /** The probes, timed as the latency route uses them. */
  probes(probes: NodeProbes): NodeProbes;
  /** The sink, counted as events are accepted. */
  events(sink: EventSink): EventSink;
  /** Registers the gauges read from the running objects. */
  observe(observed: Observed): void;
}

type Registers = Registry[];

/** The core's port: requests by route, method and status with their time, and 429s by operation. */
function requestMetrics(registers: Registers): Metrics {
  const requests = new Counter({ name: 'netdiag_http_requests_total', help: 'Requests answered, by route pattern, method and status.', labelNames: ['route', 'method', 'status'] as const, registers });
  const durations = new Histogram({ name: 'netdiag_http_request_duration_seconds', help: 'Time from receipt to the reply (for streamed bodies, to their first byte), by route pattern.', labelNames: ['route'] as const, buckets: REQUEST_BUCKETS, registers });
  const limited = new Counter({ name: 'netdiag_rate_limited_total', help: 'Requests refused with 429, by operation.', labelNames: ['operation'] as const, registers });
  for (const operation of OPERATIONS) limited.inc({ operation }, 0);
  // prom-client hashes a label set on every call; each series is looked up once and kept (the
  // sets are few: route patterns × methods × statuses), which halves what a request pays.
  const requestSeries = new Map<string, { inc(): void }>();
  const durationSeries = new Map<string, { observe(value: number): void }>();
  return {
    enabled: true,
    request(route, method, status, seconds) {
      const key = `${route} ${method} ${String(status)}`;
      let counter = requestSeries.get(key);
      if (counter === undefined) requestSeries.set(key, (counter = requests.labels({ route, method, status: String(status) })));
      counter.inc();
      let histogram = durationSeries.get(route);
      if (histogram === undefined) durationSeries.set(route, (histogram = durations.labels({ route })));
      histogram.observe(seconds);
    },
    rateLimited(operation) {
      limited.inc({ operation });
    },
  };
}

/** The resolver's outcomes: cache hits and misses, upstream lookups by outcome and their time. */
function resolverMetrics(registers: Registers): ResolverObserver {
  const cacheLookups = new Counter({ name: 'netdiag_dns_cache_lookups_total', help: 'DNS cache lookups of /v1/dns/resolve, by result (hit or miss).', labelNames: ['result'] as const, registers });
  const upstream = new Counter({ name: 'netdiag_dns_upstream_lookups_total', help: 'Lookups through the upstream, by outcome: answer, bad_gateway (502), unavailable (503, also refused locally by the circuit or the outstanding cap), timeout (504), ptr_budget (a caller\'s PTR for /v1/ip not asked: the callers\' share of the lookups in flight was taken; reverse_hostname null).', labelNames: ['outcome'] as const, registers });
  const upstreamSeconds = new Histogram({ name: 'netdiag_dns_upstream_duration_seconds', help: 'Time of lookups that went to the upstream, whatever their outcome.', buckets: RTT_BUCKETS, registers });
  const [hits, misses] = [cacheLookups.labels({ result: 'hit' }), cacheLookups.labels({ result: 'miss' })];
  const outcomes = { answer: upstream.labels({ outcome: 'answer' }), bad_gateway: upstream.labels({ outcome: 'bad_gateway' }), unavailable: upstream.labels({ outcome: 'unavailable' }), timeout: upstream.labels({ outcome: 'timeout' }), ptr_budget: upstream.labels({ outcome: 'ptr_budget' }) };
  return {
    cache(hit) {
      (hit ? hits : misses).inc();
    },
    upstream(outcome, seconds) {
      outcomes[outcome].inc();
      if (seconds !== undefined) upstreamSeconds.observe(seconds);
    },
  };
}

/** The probes, each measurement timed by region and each failure counted. */
function probeMetrics(registers: Registers): (probes: NodeProbes) => NodeProbes {
  const probeSeconds = new Histogram({ name: 'netdiag_probe_rtt_seconds', help: 'Edge-to-region round trips measured for /v1/latency/regions/{region}/probe, by region.', labelNames: ['region'] as const, buckets: RTT_BUCKETS, registers });
  const probeFailures = new Counter({ name: 'netdiag_probe_failures_total', help: 'Probe measurements that failed (503 probe_unavailable), by region.', labelNames: ['region'] as const, registers });
  return (probes) => ({
    regions: probes.regions,
    reachable: (region) => probes.reachable(region),
    close: () => probes.close(),
    async measure(region: RegionId) {
      try {
        const ms = await probes.measure(region);
        probeSeconds.observe({ region }, ms / 1000);
        return ms;
      } catch (err) {
        probeFailures.inc({ region });
        throw err;
      }
    },
  });
}

/** The sink, each accepted event counted. */
function eventMetrics(registers: Registers): (sink: EventSink) => EventSink {
  const accepted = new Counter({ name: 'netdiag_events_accepted_total', help: 'Analytics events accepted (202) and handed to the sink.', registers });
  return (sink) => ({
    accept(event) {
      accepted.inc();
      sink.accept(event);
    },
    close: (graceMs) => sink.close(graceMs),
  });
}

/** The gauges read from the running objects at each scrape: the DNS cache and circuit, the limiter's store, the event queue, the probes. */
function observedGauges(registers: Registers, { dns, limiter, events, probes }: Observed): void {
  new Gauge({ name: 'netdiag_dns_cache_entries', help: 'Answers held in the DNS cache.', registers, collect() { this.set(dns.cache.size); } });
  new Gauge({ name: 'netdiag_dns_cache_bytes', help: 'Estimated bytes held by the DNS cache (its byte bound counts these).', registers, collect() { this.set(dns.cache.bytes); } });
  new Gauge({ name: 'netdiag_dns_circuit_open', help: '1 while the upstream circuit is open (lookups refused with 503 and a recovery probe running), else 0.', registers, collect() { this.set(dns.circuit.isOpen ? 1 : 0); } });
  new Gauge({
    name: 'netdiag_rate_limit_store',
    help: 'The limiter store counting requests now: local (this process alone), shared (Redis, or the table the worker threads share), fallback (the shared store failed; counting in-process until it is back). 1 for the one in use.',
    labelNames: ['store'] as const,
    registers,
    collect() {
      const now = limiter.kind === 'local' ? 'local' : limiter.degraded() ? 'fallback' : 'shared';
      for (const store of ['local', 'shared', 'fallback']) this.set({ store }, store === now ? 1 : 0);
    },
  });
  if (events instanceof HttpEventSink) {
    new Gauge({ name: 'netdiag_events_queue_depth', help: 'Events waiting for the collector.', registers, collect() { this.set(events.depth); } });
    new Counter({ name: 'netdiag_events_delivered_total', help: 'Events the collector accepted.', registers, collect() { this.reset(); this.inc(events.delivered); } });
    new Counter({ name: 'netdiag_events_dropped_total', help: 'Events dropped at the queue bound (NETDIAG_EVENTS_QUEUE), never delivered.', registers, collect() { this.reset(); this.inc(events.dropped); } });
  }
  new Gauge({
    name: 'netdiag_probe_up',
    help: "1 when the region's probe answered its last exchange (measurements and the keep-warm requests), 0 when it did not; absent before the first.",
    labelNames: ['region'] as const,
    registers,
    collect() {
      this.reset();
      for (const region of probes.regions) {
        const up = probes.reachable(region);
        if (up !== undefined) this.set({ region }, up ? 1 : 0);
      }
    },
  });
}

export function nodeMetrics(): NodeMetrics {
  const registry = new Registry();
  // Process metrics (CPU, memory, event-loop lag, handles, GC) under prom-client's standard names.
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  // Created in this order, so the exposition lists the families as it always has.
  const metrics = requestMetrics(registers);
  const resolver = resolverMetrics(registers);
  const events = eventMetrics(registers);
  const probes = probeMetrics(registers);
  return {
    registry,
    metrics,
    resolver,
    probes,
    events,
    observe: (observed) => {
      observedGauges(registers, observed);
    },
  };
}
