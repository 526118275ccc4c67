// In-memory implementations of every port, for in-process tests of the core.
import { DnsCache } from '../../src/engines/dns/cache.js';
import { createResolver } from '../../src/engines/dns/resolver.js';
import { NO_PROBES } from '../../src/core/ports/probe-client.js';
import { NO_GEO } from '../../src/core/ports/geo-lookup.js';
import { TRUST_NONE } from '../../src/core/net/trust.js';
import { DEFAULT_LIMITS } from '../../src/core/ratelimit/limits.js';
import { MemoryLimiterStore } from '../../src/core/ratelimit/memory-store.js';
import type { OperatorOptions, RuntimePorts, Services } from '../../src/app/services.js';
import { NO_METRICS } from '../../src/core/ports/metrics.js';
import { loadOpenApi } from '../../src/runtime/node/adapter/load-openapi.js';
import { DnsFailure } from '../../src/core/ports/dns-transport.js';
import type { Logger } from '../../src/core/ports/logger.js';
import { NONE_SINK } from '../../src/engines/events/sinks.js';
import { ManualClock } from '../../src/core/ports/clock.conformance.js';

export interface LogEntry {
  level: string;
  obj: Record<string, unknown>;
  msg: string | undefined;
}

/** A logger that keeps its records in memory; below `level` it keeps nothing (by default it keeps every one). */
export function memoryLogger(level: 'debug' | 'info' = 'debug'): Logger & { entries: LogEntry[] } {
  const entries: LogEntry[] = [];
  const at = (name: string) => (obj: object, msg?: string) => {
    if (name === 'debug' && level !== 'debug') return;
    entries.push({ level: name, obj: obj as Record<string, unknown>, msg });
  };
  return { entries, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** Option names, so one flat override list can say either kind of part. */
const OPTION_KEYS = ['trust', 'trustHeader', 'limits', 'colo', 'publicUrl', 'accessLog', 'speedTestTargets', 'turn', 'families', 'servers', 'specialUsePtr', 'transfers'] as const;

type TestServices = Services & { ports: RuntimePorts & { clock: ManualClock } };

export function testServices(overrides: Partial<RuntimePorts & OperatorOptions> = {}): TestServices {
  const clock = new ManualClock();
  let n = 0;
  const ports: RuntimePorts & { clock: ManualClock } = {
    clock,
    newId: () => `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`,
    keyedHash: (input) => `h(${input})`,
    defer: () => undefined,
    logger: memoryLogger(),
    limiter: new MemoryLimiterStore(clock),
    // No upstream in-process: every lookup fails as unreachable unless a test passes its own.
    dns: createResolver({
      transport: { exchange: () => Promise.reject(new DnsFailure('unavailable', 'no upstream in this test')) },
      timeoutMs: 1000,
      cache: new DnsCache(100, clock),
      clock,
    }),
    geo: NO_GEO,
    probes: NO_PROBES,
    events: NONE_SINK,
    metrics: NO_METRICS,
    openapi: loadOpenApi(),
  };
  const options: OperatorOptions = {
    trust: TRUST_NONE,
    trustHeader: 'x-forwarded-for',
    limits: DEFAULT_LIMITS,
    colo: null,
    publicUrl: undefined,
    accessLog: false,
    speedTestTargets: true,
    turn: undefined,
    families: { ipv4: null, ipv6: null },
  };
  for (const [key, value] of Object.entries(overrides)) {
    Object.assign((OPTION_KEYS as readonly string[]).includes(key) ? options : ports, { [key]: value });
  }
  return { ports, options };
}

export const loopback = { peerAddress: '127.0.0.1', httpProtocol: 'HTTP/1.1', tlsVersion: null };
