import { NO_METRICS } from '../../../core/ports/metrics.js';
import { DnsCache } from '../../../engines/dns/cache.js';
import { dohTransport } from '../../../engines/dns/doh.js';
import { createResolver } from '../../../engines/dns/resolver.js';
import type { EventSink } from '../../../core/ports/event-sink.js';
import { TRUST_NONE } from '../../../core/net/trust.js';
import { NO_PROBES } from '../../../core/ports/probe-client.js';
import { NO_GEO } from '../../../core/ports/geo-lookup.js';
import { WORKERS_PORT_CHECK } from '../ports/port-check.js';
import { workersDefer } from '../ports/clock.js';
import { withLocalFallback, type SharedStore } from '../../../core/ratelimit/fallback-store.js';
import { operatorOptions, type Services } from '../../../app/services.js';
import { SYSTEM_CLOCK } from '../../../core/ports/clock.js';
import { OPENAPI_ENCODED, OPENAPI_JSON } from '../../../generated/openapi-document.js';
import { analyticsEngineSink } from '../ports/event-sink.js';
import { LIMIT_BINDINGS, type BoundOperation, type WorkersConfig } from './config.js';
import type { WorkerEnv } from './env.js';
import { webCryptoHasher } from '../ports/keyed-hash.js';
import { BindingLimiterStore } from '../ports/limiter-store/binding.js';
import { DurableObjectLimiterStore } from '../ports/limiter-store/durable-object.js';
import { consoleLogger } from '../ports/logger.js';
import { workersProbes } from '../ports/probe-client.js';
import type { Logger } from '../../../core/ports/logger.js';
import { eventSinkFor } from '../../../engines/events/sinks.js';
import { OPERATIONS } from '../../../core/ports/limiter-store.js';

/** A store shared by every isolate, with this isolate's own counters while it fails (docs/api.md). */
function limiterStore(config: WorkersConfig, env: WorkerEnv, logger: Logger) {
  let shared: SharedStore;
  if (config.limiter === 'binding') {
    const bindings = {} as Record<BoundOperation, RateLimit>;
    for (const operation of OPERATIONS) if (operation !== 'port') bindings[operation] = env[LIMIT_BINDINGS[operation]] as RateLimit;
    shared = new BindingLimiterStore(bindings, SYSTEM_CLOCK);
  } else {
    shared = new DurableObjectLimiterStore(env.RATE_LIMITER as NonNullable<WorkerEnv['RATE_LIMITER']>, SYSTEM_CLOCK);
  }
  // A Durable Object call across the world takes tens of milliseconds; a second is a fault.
  return withLocalFallback(shared, logger, { timeoutMs: 1_000, retryMs: 5_000, defer: workersDefer, clock: SYSTEM_CLOCK });
}

function eventSink(config: WorkersConfig, env: WorkerEnv, logger: Logger): EventSink {
  const sink = config.eventsSink;
  if (sink.kind === 'analytics-engine') return analyticsEngineSink(env.ANALYTICS as AnalyticsEngineDataset);
  // Backoff bounded well inside waitUntil's 30 s, so a retry is not cut off mid-wait.
  return eventSinkFor(sink, { logger, clock: SYSTEM_CLOCK, queueSize: config.eventsQueueSize, defer: workersDefer, maxBackoffMs: 10_000 });
}

/** Every port, built from the validated configuration and the Worker's bindings. */
export function workersServices(config: WorkersConfig, env: WorkerEnv): Services {
  const logger = consoleLogger(config.logLevel);
  const ports = {
    clock: SYSTEM_CLOCK,
    newId: () => crypto.randomUUID(),
    keyedHash: webCryptoHasher(config.rateLimitKey),
    defer: workersDefer,
    logger,
    limiter: limiterStore(config, env, logger),
    dns: createResolver({
      transport: dohTransport(config.dohUrl),
      timeoutMs: config.dnsTimeoutMs,
      cache: new DnsCache({ maxEntries: config.dnsCacheSize, maxBytes: config.dnsCacheBytes, maxEntryBytes: config.dnsCacheMaxEntryBytes }, SYSTEM_CLOCK),
      clock: SYSTEM_CLOCK,
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
  // The platform verified the caller (CF-Connecting-IP): no proxy is trusted, no header read; the
  // edge names its own location on every request (request.cf.colo).
  const options = operatorOptions(config, { trust: TRUST_NONE, trustHeader: 'x-forwarded-for', colo: null });
  return { ports, options };
}
