import { randomUUID } from 'node:crypto';
import type pino from 'pino';
import type { OperatorOptions, RuntimePorts, Services } from '../../app/services.js';
import type { Clock, Defer } from '../../core/ports/clock.js';
import type { Config } from './config.js';
import { nodeResolver } from './dns/resolver.js';
import type { ResolverRuntime } from '../../engines/dns/resolver.js';
import { loadGeo } from './geo/load.js';
import { nodeLimiter, type NodeLimiter } from './limits/limiter.js';
import { HttpEventSink } from '../../engines/events/http-sink.js';
import { undiciPoster } from './events/batch-poster.js';
import { type EventSink } from '../../core/ports/event-sink.js';
import { loadOpenApi } from './openapi.js';
import { loadClientPackage } from './client-package.js';
import { nodeCompress } from './compress.js';
import { nodeProbes, type NodeProbes } from './probes/client.js';
import type { NodeMetrics } from './metrics/metrics.js';
import { NO_METRICS } from '../../core/ports/metrics.js';
import { tcpPortCheck } from './port-check.js';
import type { Logger } from '../../core/ports/logger.js';
import { NONE_SINK, logSink } from '../../engines/events/sinks.js';
import { PORT_CHECK_OFF } from '../../core/ports/port-check.js';

export const systemClock: Clock = { now: () => Date.now() };

/**
 * The process outlives every response, so deferred work needs nothing to keep it alive; what
 * must finish at shutdown (the events queue) is flushed by the drain (serve.ts).
 */
export const processDefer: Defer = () => undefined;

function eventSink(config: Config, logger: Logger, clock: Clock): EventSink {
  const sink = config.eventsSink;
  if (sink.kind === 'none') return NONE_SINK;
  if (sink.kind === 'log') return logSink(logger);
  return new HttpEventSink({ url: sink.url, authorization: sink.authorization, queueSize: config.eventsQueueSize, logger, clock, post: undiciPoster });
}

/** The parts of the ports this process starts and stops: the core never sees these handles. */
interface NodeLifecycle {
  limiter: NodeLimiter;
  dns: ResolverRuntime;
  probes: NodeProbes;
  events: EventSink;
}

/**
 * Builds the Node implementations of every port from the validated configuration, and the
 * operator's options from the same; with `metrics`, each port is observed for /metrics.
 */
export function nodeServices(config: Config, logger: pino.Logger, metrics?: NodeMetrics): { services: Services; lifecycle: NodeLifecycle } {
  const limiter = nodeLimiter(config, logger, systemClock);
  const dns = nodeResolver(config, systemClock, logger, metrics?.resolver);
  const probes = nodeProbes(config.probes, logger);
  const events = eventSink(config, logger, systemClock);
  metrics?.observe({ dns, limiter, events, probes });
  const observedEvents = metrics === undefined ? events : metrics.events(events);
  const ports: RuntimePorts = {
    clock: systemClock,
    newId: () => randomUUID(),
    keyedHash: limiter.keyedHash,
    defer: processDefer,
    logger,
    limiter: limiter.store,
    dns,
    geo: loadGeo(config),
    events: observedEvents,
    probes: metrics === undefined ? probes : metrics.probes(probes),
    metrics: metrics?.metrics ?? NO_METRICS,
    openapi: loadOpenApi(),
    clientPackage: loadClientPackage(),
    compress: nodeCompress,
    portCheck: config.portCheck ? tcpPortCheck() : PORT_CHECK_OFF,
  };
  const options: OperatorOptions = {
    trust: config.trust,
    trustHeader: config.trustHeader,
    limits: config.limits,
    colo: config.colo,
    specialUsePtr: config.specialUsePtr,
    publicUrl: config.publicUrl,
    accessLog: config.accessLog,
    speedTestTargets: config.speedTestTargets,
    turn: config.turn,
    families: config.families,
  };
  return { services: { ports, options }, lifecycle: { limiter, dns, probes, events: observedEvents } };
}
