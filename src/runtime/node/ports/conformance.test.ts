// Node's implementations of the ports held to each port's conformance suite (src/core/ports/):
// the clock and defer, pino's logger, the embedded geo tables and an operator's MaxMind files,
// the TCP port check, and the event sinks (none, log, HTTP to a real collector). Node's DNS
// transports run theirs against Knot (test/dns/transports.test.ts), its probe client against
// `netdiag probe` processes (test/latency/probes.test.ts), its limiter stores theirs in
// src/core/ratelimit/memory-store.test.ts and test/http/shared-limits.test.ts.
import { once } from 'node:events';
import { createServer } from 'node:net';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll } from 'vitest';
import { startCollector, type Collector } from '../../../../test/support/collector.js';
import { memoryLogger } from '../../../../test/support/services.js';
import { clockConformance } from '../../../core/ports/clock.conformance.js';
import { eventSinkConformance } from '../../../core/ports/event-sink.conformance.js';
import { geoLookupConformance } from '../../../core/ports/geo-lookup.conformance.js';
import { loggerConformance, type LogRecord } from '../../../core/ports/logger.conformance.js';
import { portCheckConformance } from '../../../core/ports/port-check.conformance.js';
import { parseAddress, type ParsedAddress } from '../../../core/net/address.js';
import { HttpEventSink } from '../../../engines/events/http-sink.js';
import { logSink, NONE_SINK } from '../../../engines/events/sinks.js';
import { nodePoster } from './event-sink.js';
import { loadGeo } from './geo-lookup/load.js';
import { createLogger } from './logger.js';
import { nodeMetrics } from './metrics.js';
import { tcpPortCheck } from './port-check.js';
import { SYSTEM_CLOCK } from '../../../core/ports/clock.js';
import { processDefer } from './clock.js';
import { freePort } from '../../../../test/support/wait.js';
import { maxmindFixtures } from '../../../../test/support/maxmind.js';

const MAXMIND = maxmindFixtures('MaxMind files held to the geo lookup suite');

clockConformance('Node', () => ({ clock: SYSTEM_CLOCK, defer: processDefer, pass: (ms) => sleep(ms) }));

loggerConformance('Node (pino)', () => {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter((l) => l !== ''));
      done();
    },
  });
  const logger = createLogger('info', stream);
  return {
    logger,
    records: () =>
      lines.map((line): LogRecord => {
        const { level, msg, ...fields } = JSON.parse(line) as Record<string, unknown>;
        return { level: level as LogRecord['level'], msg: msg as string | undefined, fields };
      }),
  };
});

geoLookupConformance('embedded DB-IP tables', () => ({ ...loadGeo({ geoipCity: undefined, geoipAsn: undefined }), knownPlace: { address: '8.8.8.8', countryCode: 'US' }, knownNetwork: { address: '8.8.8.8', asn: 15169 } }));
if (MAXMIND !== undefined) geoLookupConformance('MaxMind files (the test databases)', () => ({
  ...loadGeo({ geoipCity: `${MAXMIND}GeoIP2-City-Test.mmdb`, geoipAsn: `${MAXMIND}GeoLite2-ASN-Test.mmdb` }),
  knownPlace: { address: '81.2.69.160', countryCode: 'GB' },
  knownNetwork: { address: '1.128.0.1', asn: 1221 },
}));

const address = (text: string): ParsedAddress => {
  const parsed = parseAddress(text);
  if (parsed === undefined) throw new Error(text);
  return parsed;
};
portCheckConformance('Node (TCP)', async () => {
  const listening = createServer().listen(0, '127.0.0.1');
  await once(listening, 'listening');
  afterAll(() => {
    listening.close();
  });
  const open = { address: address('127.0.0.1'), port: (listening.address() as { port: number }).port };
  return { check: tcpPortCheck(1_000), peers: { open, closed: { address: address('127.0.0.1'), port: await freePort() }, own: address('127.0.0.1'), notOwn: address('192.0.2.1') } };
});

eventSinkConformance('none', () => ({ sink: NONE_SINK }));
eventSinkConformance('log', () => {
  const logger = memoryLogger();
  return { sink: logSink(logger), delivered: () => logger.entries.map((e) => e.obj) };
});
const collectors: Collector[] = [];
afterAll(async () => {
  await Promise.all(collectors.map((c) => c.close()));
});
eventSinkConformance('HTTP, to a real collector', async () => {
  const collector = await startCollector();
  collectors.push(collector);
  return { sink: new HttpEventSink({ url: collector.url, queueSize: 10_000, logger: memoryLogger(), clock: SYSTEM_CLOCK, post: nodePoster() }), delivered: () => collector.events() };
});
eventSinkConformance('HTTP, behind the /metrics observer', async () => {
  const collector = await startCollector();
  collectors.push(collector);
  const sink = new HttpEventSink({ url: collector.url, queueSize: 10_000, logger: memoryLogger(), clock: SYSTEM_CLOCK, post: nodePoster() });
  return { sink: nodeMetrics().events(sink), delivered: () => collector.events() };
});
