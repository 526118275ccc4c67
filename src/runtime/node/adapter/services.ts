import { randomUUID } from 'node:crypto';
import type pino from 'pino';
import { operatorOptions, type RuntimePorts, type Services } from '../../../app/services.js';
import { SYSTEM_CLOCK } from '../../../core/ports/clock.js';
import { processDefer } from '../ports/clock.js';
import type { Config } from './config.js';
import { nodeResolver } from '../ports/dns-transport/transports.js';
import type { ResolverRuntime } from '../../../engines/dns/resolver.js';
import { loadGeo } from '../ports/geo-lookup/load.js';
import { nodeLimiter, type NodeLimiter } from '../ports/limiter-store/limiter.js';
import { nodePoster } from '../ports/event-sink.js';
import type { EventSink } from '../../../core/ports/event-sink.js';
import { loadOpenApi } from './load-openapi.js';
import { loadClientPackage } from './load-client-package.js';
import { nodeCompress } from './compress.js';
import { nodeProbes, type NodeProbes } from '../ports/probe-client.js';
import type { NodeMetrics } from '../ports/metrics.js';
import { NO_METRICS } from '../../../core/ports/metrics.js';
import { tcpPortCheck } from '../ports/port-check.js';
import { eventSinkFor } from '../../../engines/events/sinks.js';
import { PORT_CHECK_OFF } from '../../../core/ports/port-check.js';

/** The parts of the ports this process starts and stops: the app never sees these handles. */
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
  const limiter = nodeLimiter(config, logger, SYSTEM_CLOCK);
  const dns = nodeResolver(config, SYSTEM_CLOCK, logger, metrics?.resolver);
  const probes = nodeProbes(config.probes, logger);
  const events = eventSinkFor(config.eventsSink, { logger, clock: SYSTEM_CLOCK, queueSize: config.eventsQueueSize, post: nodePoster() });
  metrics?.observe({ dns, limiter, events, probes });
  const observedEvents = metrics === undefined ? events : metrics.events(events);
  const ports: RuntimePorts = {
    clock: SYSTEM_CLOCK,
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
  const options = { ...operatorOptions(config, { trust: config.trust, trustHeader: config.trustHeader, colo: config.colo, specialUsePtr: config.specialUsePtr }), transfers: config.transfers };
  return { services: { ports, options }, lifecycle: { limiter, dns, probes, events: observedEvents } };
}
