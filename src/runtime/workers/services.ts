import { waitUntil } from 'cloudflare:workers';
import { NO_METRICS } from '../../core/metrics.js';
import { DnsCache } from '../../features/dns/cache.js';
import { dohTransport } from '../../features/dns/doh.js';
import { createResolver } from '../../features/dns/resolver.js';
import { HttpEventSink } from '../../features/events/http-sink.js';
import { NONE_SINK, logSink, type EventSink } from '../../features/events/sink.js';
import { TRUST_NONE } from '../../core/net/trust.js';
import { NO_PROBES } from '../../features/latency/probes.js';
import { FallbackLimiterStore, type SharedStore } from '../../core/ratelimit/fallback-store.js';
import { OPERATIONS } from '../../core/ratelimit/limits.js';
import { MemoryLimiterStore } from '../../core/ratelimit/memory-store.js';
import type { Services } from '../../app/services.js';
import type { Clock, Defer, Logger } from '../../core/ports.js';
import { OPENAPI_ENCODED, OPENAPI_JSON } from '../../generated/openapi-document.js';
import { analyticsEngineSink } from './analytics-engine-sink.js';
import { LIMIT_BINDINGS, type BoundOperation, type WorkersConfig } from './config.js';
import type { WorkerEnv } from './env.js';
import { webCryptoHasher } from './keyed-hash.js';
import { BindingLimiterStore } from './limiter-binding.js';
import { DurableObjectLimiterStore } from './limiter-durable-object.js';
import { consoleLogger } from './logger.js';
import { workersProbes } from './probes.js';

const clock: Clock = { now: () => Date.now() };

/**
 * `waitUntil` from `cloudflare:workers` belongs to the request being served. Work deferred from
 * a timer that fired after every request ended has no request to belong to: it runs while the
 * isolate lives, and its owner schedules it again if it was dropped (DeferredTimer).
 */
const defer: Defer = (work) => {
  try {
    waitUntil(work);
  } catch {
    // No request in progress: nothing to attach to.
  }
};

/** A store shared by every isolate, with this isolate's own counters while it fails (docs/api.md). */
function limiterStore(config: WorkersConfig, env: WorkerEnv, logger: Logger) {
  let shared: SharedStore;
  if (config.limiter === 'binding') {
    const bindings = {} as Record<BoundOperation, RateLimit>;
    for (const operation of OPERATIONS) if (operation !== 'port') bindings[operation] = env[LIMIT_BINDINGS[operation]] as RateLimit;
    shared = new BindingLimiterStore(bindings, clock);
  } else {
    shared = new DurableObjectLimiterStore(env.RATE_LIMITER as NonNullable<WorkerEnv['RATE_LIMITER']>, clock);
  }
  // A Durable Object call across the world takes tens of milliseconds; a second is a fault.
  return new FallbackLimiterStore(shared, new MemoryLimiterStore(clock), logger, { timeoutMs: 1_000, retryMs: 5_000, defer, clock });
}

function eventSink(config: WorkersConfig, env: WorkerEnv, logger: Logger): EventSink {
  const sink = config.eventsSink;
  switch (sink.kind) {
    case 'none':
      return NONE_SINK;
    case 'log':
      return logSink(logger);
    case 'analytics-engine':
      return analyticsEngineSink(env.ANALYTICS as AnalyticsEngineDataset);
    case 'http':
      // Backoff bounded well inside waitUntil's 30 s, so a retry is not cut off mid-wait.
      return new HttpEventSink({ url: sink.url, authorization: sink.authorization, queueSize: config.eventsQueueSize, logger, defer, clock, maxBackoffMs: 10_000 });
  }
}

/** Every port, built from the validated configuration and the Worker's bindings. */
export function workersServices(config: WorkersConfig, env: WorkerEnv): Services {
  const logger = consoleLogger(config.logLevel);
  const ports = {
    clock,
    newId: () => crypto.randomUUID(),
    keyedHash: webCryptoHasher(config.rateLimitKey),
    defer,
    logger,
    limiter: limiterStore(config, env, logger),
    dns: createResolver({
      transport: dohTransport(config.dohUrl),
      timeoutMs: config.dnsTimeoutMs,
      cache: new DnsCache({ maxEntries: config.dnsCacheSize, maxBytes: config.dnsCacheBytes, maxEntryBytes: config.dnsCacheMaxEntryBytes }, clock),
      clock,
      maxOutstanding: config.dnsMaxOutstanding,
      logger,
      defer,
    }),
    // Location and network come with each request (request.cf); these answer nothing.
    geo: { city: { city: () => undefined }, asn: { asn: () => undefined }, anyAddress: false },
    // Workers can open TCP sockets, but netdiag does not make a Worker connect to its callers:
    // the answer would come from whichever Cloudflare location ran it, through Cloudflare's own
    // egress, and the platform refuses some ports and address ranges.
    portCheck: { unavailable: 'The port check is not served on Cloudflare Workers: this deployment does not open connections to its callers. A netdiag server on Node answers /port/N when its operator turns it on.' },
    events: eventSink(config, env, logger),
    probes: config.probes.size === 0 ? NO_PROBES : workersProbes(config.probes, env.REGION_PROBE, logger),
    openapi: { text: OPENAPI_JSON, ...OPENAPI_ENCODED },
    // The platform's analytics (Workers Analytics, Logpush) take the place of /metrics here.
    metrics: NO_METRICS,
  };
  const options = {
    // The platform verified the caller (CF-Connecting-IP): no proxy is trusted, no header read.
    trust: TRUST_NONE,
    trustHeader: 'x-forwarded-for' as const,
    limits: config.limits,
    // The edge names its own location on every request (request.cf.colo).
    colo: null,
    publicUrl: config.publicUrl,
    accessLog: config.accessLog,
    speedTestTargets: config.speedTestTargets,
    turn: config.turn,
    families: config.families,
  };
  return { ports, options };
}
