import { waitUntil } from 'cloudflare:workers';
import { NO_METRICS } from '../../core/ports/metrics.js';
import { DnsCache } from '../../engines/dns/cache.js';
import { dohTransport } from '../../engines/dns/doh.js';
import { createResolver } from '../../engines/dns/resolver.js';
import { HttpEventSink } from '../../engines/events/http-sink.js';
import { type EventSink } from '../../core/ports/event-sink.js';
import { TRUST_NONE } from '../../core/net/trust.js';
import { NO_PROBES } from '../../core/ports/probe-client.js';
import { NO_GEO } from '../../core/ports/geo-lookup.js';
import type { PortCheck } from '../../core/ports/port-check.js';
import { FallbackLimiterStore, type SharedStore } from '../../core/ratelimit/fallback-store.js';
import { MemoryLimiterStore } from '../../core/ratelimit/memory-store.js';
import type { Services } from '../../app/services.js';
import type { Clock, Defer } from '../../core/ports/clock.js';
import { OPENAPI_ENCODED, OPENAPI_JSON } from '../../generated/openapi-document.js';
import { analyticsEngineSink } from './analytics-engine-sink.js';
import { LIMIT_BINDINGS, type BoundOperation, type WorkersConfig } from './config.js';
import type { WorkerEnv } from './env.js';
import { webCryptoHasher } from './keyed-hash.js';
import { BindingLimiterStore } from './limiter-binding.js';
import { DurableObjectLimiterStore } from './limiter-durable-object.js';
import { consoleLogger } from './logger.js';
import { workersProbes } from './probes.js';
import type { Logger } from '../../core/ports/logger.js';
import { NONE_SINK, logSink } from '../../engines/events/sinks.js';
import { OPERATIONS } from '../../core/ports/limiter-store.js';

export const workersClock: Clock = { now: () => Date.now() };

/**
 * `waitUntil` from `cloudflare:workers` belongs to the request being served. Work deferred from
 * a timer that fired after every request ended has no request to belong to: it runs while the
 * isolate lives, and its owner schedules it again if it was dropped (DeferredTimer).
 */
export const workersDefer: Defer = (work) => {
  try {
    waitUntil(work);
  } catch {
    // No request in progress: nothing to attach to.
  }
};

/**
 * Workers can open TCP sockets, but netdiag does not make a Worker connect to its callers: the
 * answer would come from whichever Cloudflare location ran it, through Cloudflare's own egress,
 * and the platform refuses some ports and address ranges.
 */
export const WORKERS_PORT_CHECK: PortCheck = { unavailable: 'The port check is not served on Cloudflare Workers: this deployment does not open connections to its callers. A netdiag server on Node answers /port/N when its operator turns it on.' };

/** A store shared by every isolate, with this isolate's own counters while it fails (docs/api.md). */
function limiterStore(config: WorkersConfig, env: WorkerEnv, logger: Logger) {
  let shared: SharedStore;
  if (config.limiter === 'binding') {
    const bindings = {} as Record<BoundOperation, RateLimit>;
    for (const operation of OPERATIONS) if (operation !== 'port') bindings[operation] = env[LIMIT_BINDINGS[operation]] as RateLimit;
    shared = new BindingLimiterStore(bindings, workersClock);
  } else {
    shared = new DurableObjectLimiterStore(env.RATE_LIMITER as NonNullable<WorkerEnv['RATE_LIMITER']>, workersClock);
  }
  // A Durable Object call across the world takes tens of milliseconds; a second is a fault.
  return new FallbackLimiterStore(shared, new MemoryLimiterStore(workersClock), logger, { timeoutMs: 1_000, retryMs: 5_000, defer: workersDefer, clock: workersClock });
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
      return new HttpEventSink({ url: sink.url, authorization: sink.authorization, queueSize: config.eventsQueueSize, logger, defer: workersDefer, clock: workersClock, maxBackoffMs: 10_000 });
  }
}

/** Every port, built from the validated configuration and the Worker's bindings. */
export function workersServices(config: WorkersConfig, env: WorkerEnv): Services {
  const logger = consoleLogger(config.logLevel);
  const ports = {
    clock: workersClock,
    newId: () => crypto.randomUUID(),
    keyedHash: webCryptoHasher(config.rateLimitKey),
    defer: workersDefer,
    logger,
    limiter: limiterStore(config, env, logger),
    dns: createResolver({
      transport: dohTransport(config.dohUrl),
      timeoutMs: config.dnsTimeoutMs,
      cache: new DnsCache({ maxEntries: config.dnsCacheSize, maxBytes: config.dnsCacheBytes, maxEntryBytes: config.dnsCacheMaxEntryBytes }, workersClock),
      clock: workersClock,
      maxOutstanding: config.dnsMaxOutstanding,
      logger,
      defer: workersDefer,
    }),
    // Location and network come with each request (request.cf); these answer nothing.
    geo: { ...NO_GEO, anyAddress: false },
    portCheck: WORKERS_PORT_CHECK,
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
