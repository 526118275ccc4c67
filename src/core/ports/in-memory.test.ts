// The in-process suites' own implementations of the ports (test/support/services.ts), and the
// ones that hold no data, held to each port's conformance suite: they stand in for the runtimes'
// in every in-process test, so they must keep the same promises.
import { memoryLogger } from '../../../test/support/services.js';
import { clockConformance, ManualClock } from './clock.conformance.js';
import { geoLookupConformance } from './geo-lookup.conformance.js';
import { NO_GEO } from './geo-lookup.js';
import { loggerConformance, type LogRecord } from './logger.conformance.js';
import { portCheckConformance } from './port-check.conformance.js';
import { PORT_CHECK_OFF } from './port-check.js';
import { probeClientConformance } from './probe-client.conformance.js';
import { NO_PROBES } from './probe-client.js';

clockConformance('manual (the in-process suites\')', () => {
  const clock = new ManualClock();
  return {
    clock,
    defer: () => undefined,
    pass: (ms) => {
      clock.advance(ms);
    },
  };
});

loggerConformance('memory (the in-process suites\')', () => {
  const logger = memoryLogger('info');
  return { logger, records: () => logger.entries.map((e): LogRecord => ({ level: e.level as LogRecord['level'], msg: e.msg, fields: e.obj })) };
});

geoLookupConformance('no data (Workers, the in-process suites)', () => NO_GEO);
probeClientConformance('no probes', () => ({ probes: NO_PROBES }));
portCheckConformance('switched off', () => ({ check: PORT_CHECK_OFF }));
