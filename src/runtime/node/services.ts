import { hash, randomBytes, randomUUID } from 'node:crypto';
import type pino from 'pino';
import { MemoryLimiterStore } from '../../ratelimit/memory-store.js';
import type { Clock, Logger, Services } from '../../services.js';
import type { Config } from './config.js';
import { nodeResolver } from './dns.js';
import { loadGeo } from './geo/load.js';
import { HttpEventSink } from '../../events/http-sink.js';
import { NONE_SINK, logSink, type EventSink } from '../../events/sink.js';
import { loadOpenApi } from './openapi.js';
import { nodeProbes, type NodeProbes } from './probe-client.js';

export const systemClock: Clock = { now: () => Date.now() };

/**
 * SHA-256 over a secret prefix drawn per process: rate-limit keys identify a source within this
 * process's windows but cannot be reversed or joined with another deployment's. The output is
 * never shown to anyone, so length extension (the reason HMAC exists) buys an attacker nothing,
 * and the one-shot hash costs a quarter of an HMAC object per request (0.33 µs against 1.39 µs).
 */
export function processKeyedHash(key: Buffer = randomBytes(32)): (input: string) => string {
  const prefix = key.toString('base64');
  return (input) => hash('sha256', prefix + input, 'base64url');
}

function eventSink(config: Config, logger: Logger): EventSink {
  const sink = config.eventsSink;
  if (sink.kind === 'none') return NONE_SINK;
  if (sink.kind === 'log') return logSink(logger);
  return new HttpEventSink({ url: sink.url, queueSize: config.eventsQueueSize, logger });
}

/** Builds the Node implementations of every port from the validated configuration. */
export function nodeServices(config: Config, logger: pino.Logger): Services & { probes: NodeProbes } {
  return {
    clock: systemClock,
    newId: () => randomUUID(),
    keyedHash: processKeyedHash(),
    trust: config.trust,
    limiter: new MemoryLimiterStore(systemClock),
    dns: nodeResolver(config, systemClock),
    geo: loadGeo(config),
    colo: config.colo,
    limits: config.limits,
    probes: nodeProbes(config.probes, logger),
    events: eventSink(config, logger),
    publicUrl: config.publicUrl,
    openapi: loadOpenApi(),
    logger,
    accessLog: config.accessLog,
  };
}
