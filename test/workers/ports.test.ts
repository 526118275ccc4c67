// Workers' implementations of the ports, inside workerd, held to each port's conformance suite
// (src/core/ports/): the clock and waitUntil, the console logger, the DoH transport (to Knot
// behind the suites' DoH front; its `silent` fault and a closed port), the probe client (URL
// probes: `netdiag probe` on loopback and a closed port; a Durable Object probe), the port check
// (which Workers do not make), and the sinks (HTTP to the suites' collector, Analytics Engine).
// The limiter stores run theirs in limits.test.ts; Workers' geo lookups are NO_GEO, run
// in-process (src/core/ports/in-memory.test.ts).
import { env } from 'cloudflare:workers';
import { afterEach, inject, vi } from 'vitest';
import { clockConformance } from '../../src/core/ports/clock.conformance.js';
import { dnsTransportConformance } from '../../src/core/ports/dns-transport.conformance.js';
import { eventSinkConformance } from '../../src/core/ports/event-sink.conformance.js';
import { loggerConformance, type LogRecord } from '../../src/core/ports/logger.conformance.js';
import { portCheckConformance } from '../../src/core/ports/port-check.conformance.js';
import { probeClientConformance } from '../../src/core/ports/probe-client.conformance.js';
import { dohTransport } from '../../src/engines/dns/doh.js';
import { HttpEventSink } from '../../src/engines/events/http-sink.js';
import { analyticsEngineSink } from '../../src/runtime/workers/ports/event-sink.js';
import type { WorkerEnv } from '../../src/runtime/workers/adapter/env.js';
import { consoleLogger } from '../../src/runtime/workers/ports/logger.js';
import { workersProbes } from '../../src/runtime/workers/ports/probe-client.js';
import { SYSTEM_CLOCK } from '../../src/core/ports/clock.js';
import { workersDefer } from '../../src/runtime/workers/ports/clock.js';
import { WORKERS_PORT_CHECK } from '../../src/runtime/workers/ports/port-check.js';

const bound = env as unknown as WorkerEnv;
/** A loopback port nothing listens on (discard; no suite starts a server there). */
const CLOSED = 'http://127.0.0.1:9';
const LEVELS: Record<number, LogRecord['level']> = { 20: 'debug', 30: 'info', 40: 'warn', 50: 'error' };

afterEach(() => {
  vi.restoreAllMocks();
});

clockConformance('Workers', () => ({ clock: SYSTEM_CLOCK, defer: workersDefer, pass: (ms) => new Promise<void>((resolve) => setTimeout(resolve, ms)) }));

loggerConformance('Workers (console)', () => {
  const lines: string[] = [];
  const keep = (text: unknown) => {
    lines.push(String(text));
  };
  vi.spyOn(console, 'log').mockImplementation(keep);
  vi.spyOn(console, 'error').mockImplementation(keep);
  return {
    logger: consoleLogger('info'),
    records: () =>
      lines.map((line): LogRecord => {
        const { level, msg, ...fields } = JSON.parse(line) as Record<string, unknown>;
        return { level: LEVELS[level as number] ?? 'error', msg: msg as string | undefined, fields };
      }),
  };
});

const dohUrl = inject('dohUrl');
if (dohUrl !== '') {
  dnsTransportConformance(
    'Workers (DoH)',
    (kind) => Promise.resolve(kind === 'answering' ? { transport: dohTransport(dohUrl) } : kind === 'silent' ? { transport: dohTransport(dohUrl), name: 'silent.fault.test' } : { transport: dohTransport(`${CLOSED}/dns-query`) }),
    'example.test',
  );
}

probeClientConformance('Workers (URL probes)', () => ({
  probes: workersProbes(
    new Map([
      ['weur', { kind: 'url', url: inject('probeUrl') }],
      ['enam', { kind: 'url', url: CLOSED }],
    ]),
    undefined,
    consoleLogger('silent'),
  ),
  answering: 'weur',
  down: 'enam',
}));

probeClientConformance('Workers (Durable Object probes)', () => ({
  probes: workersProbes(new Map([['weur', { kind: 'durable-object' }]]), bound.REGION_PROBE, consoleLogger('silent')),
  answering: 'weur',
}));

portCheckConformance('Workers', () => ({ check: WORKERS_PORT_CHECK }));

eventSinkConformance('Workers HTTP sink, to the suites\' collector', () => ({
  sink: new HttpEventSink({ url: inject('collectorUrl'), queueSize: 10_000, logger: consoleLogger('silent'), defer: workersDefer, clock: SYSTEM_CLOCK, maxBackoffMs: 10_000 }),
}));
eventSinkConformance('Analytics Engine', () => ({ sink: analyticsEngineSink(bound.ANALYTICS as AnalyticsEngineDataset) }));
