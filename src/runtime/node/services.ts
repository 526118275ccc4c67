import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import type pino from 'pino';
import { MemoryLimiterStore } from '../../ratelimit/memory-store.js';
import type { Clock, Services } from '../../services.js';
import type { Config } from './config.js';
import { loadOpenApi } from './openapi.js';

export const systemClock: Clock = { now: () => Date.now() };

/**
 * HMAC-SHA-256 with a key drawn per process: rate-limit keys identify a source within this
 * process's windows but cannot be reversed or joined with another deployment's.
 */
export function processKeyedHash(key: Buffer = randomBytes(32)): (input: string) => string {
  return (input) => createHmac('sha256', key).update(input).digest('base64url').slice(0, 22);
}

/** Builds the Node implementations of every port from the validated configuration. */
export function nodeServices(config: Config, logger: pino.Logger): Services {
  return {
    clock: systemClock,
    newId: () => randomUUID(),
    keyedHash: processKeyedHash(),
    trust: config.trust,
    limiter: new MemoryLimiterStore(systemClock),
    limits: config.limits,
    probedRegions: new Set(config.probes.keys()),
    publicUrl: config.publicUrl,
    openapi: loadOpenApi(),
    logger,
    accessLog: config.accessLog,
  };
}
