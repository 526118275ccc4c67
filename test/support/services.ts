// In-memory implementations of every port, for in-process tests of the core.
import { TRUST_NONE } from '../../src/ip/trust.js';
import { DEFAULT_LIMITS } from '../../src/ratelimit/limits.js';
import { MemoryLimiterStore } from '../../src/ratelimit/memory-store.js';
import type { Logger, Services } from '../../src/services.js';
import { openapi } from './contract.js';
import { ManualClock } from './limiter-conformance.js';

export interface LogEntry {
  level: string;
  obj: Record<string, unknown>;
  msg: string | undefined;
}

export function memoryLogger(): Logger & { entries: LogEntry[] } {
  const entries: LogEntry[] = [];
  const at = (level: string) => (obj: object, msg?: string) => {
    entries.push({ level, obj: obj as Record<string, unknown>, msg });
  };
  return { entries, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

export function testServices(overrides: Partial<Services> = {}): Services & { clock: ManualClock } {
  const clock = new ManualClock();
  let n = 0;
  return {
    clock,
    newId: () => `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`,
    keyedHash: (input) => `h(${input})`,
    trust: TRUST_NONE,
    limiter: new MemoryLimiterStore(clock),
    limits: DEFAULT_LIMITS,
    probedRegions: new Set(),
    publicUrl: undefined,
    openapi,
    logger: memoryLogger(),
    accessLog: false,
    ...overrides,
  } as Services & { clock: ManualClock };
}

export const loopback = { peerAddress: '127.0.0.1', httpProtocol: 'HTTP/1.1', tlsVersion: null };
