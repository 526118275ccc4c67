// The logger port's conformance suite (logger.ts): structured records at four levels. Run by
// Node's pino logger (src/runtime/node/ports/conformance.test.ts), Workers' console logger
// (test/workers/ports.test.ts) and the suites' memory logger (src/core/ports/in-memory.test.ts).
import { describe, expect, it } from 'vitest';
import type { Logger } from './logger.js';

/** One record as written: its level's name, its message and its fields. */
export interface LogRecord {
  level: 'debug' | 'info' | 'warn' | 'error';
  msg: string | undefined;
  fields: Record<string, unknown>;
}

interface LoggerUnderTest {
  /** A logger at level `info`. */
  logger: Logger;
  /** What it has written so far (after whatever the implementation needs to hand it over). */
  records: () => Promise<LogRecord[]> | LogRecord[];
}

export function loggerConformance(name: string, make: () => LoggerUnderTest): void {
  describe(`${name} logger conformance`, () => {
    it('writes one record per call at info, warn and error, with the message and the fields', async () => {
      const { logger, records } = make();
      logger.info({ route: '/v1/ip', status: 200 }, 'answered');
      logger.warn({ upstream: 'dns', attempts: 3 }, 'retrying');
      logger.error({ reason: 'ECONNREFUSED' }, 'unavailable');
      const written = await records();
      expect(written.map((r) => [r.level, r.msg])).toEqual([
        ['info', 'answered'],
        ['warn', 'retrying'],
        ['error', 'unavailable'],
      ]);
      expect(written[0]?.fields).toMatchObject({ route: '/v1/ip', status: 200 });
      expect(written[1]?.fields).toMatchObject({ upstream: 'dns', attempts: 3 });
    });

    it('writes nothing below its level', async () => {
      const { logger, records } = make();
      logger.debug({ detail: 'x' }, 'quiet');
      expect(await records()).toEqual([]);
    });

    it('writes an Error among the fields with its message, not as an empty object', async () => {
      const { logger, records } = make();
      logger.warn({ err: new Error('the collector refused') }, 'delivery failed');
      const [record] = await records();
      const err = record?.fields.err;
      // Written out (JSON lines) or kept as it was given (a capture).
      expect(err instanceof Error ? err.message : JSON.stringify(err)).toContain('the collector refused');
    });

    it('never throws, whatever the fields hold', async () => {
      const { logger, records } = make();
      const circular: Record<string, unknown> = { name: 'loop' };
      circular.self = circular;
      expect(() => {
        logger.info({ circular, big: 10n }, 'odd fields');
        logger.info({});
      }).not.toThrow();
      expect((await records()).length).toBe(2);
    });
  });
}
