import { format } from 'node:util';
import pino from 'pino';
import type { LogLevel } from './config.js';

/**
 * Structured JSON logs on stdout. Nothing here knows a caller's address or User-Agent; the core
 * never hands them over (docs/api.md, "Privacy").
 */
export function createLogger(level: LogLevel, destination: pino.DestinationStream | number = 1): pino.Logger {
  const stream = typeof destination === 'number' ? pino.destination({ dest: destination, sync: false }) : destination;
  const logger = pino(
    {
      level,
      base: { service: 'netdiag' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    stream,
  );
  destinations.set(logger, stream);
  return logger;
}

const destinations = new WeakMap<pino.Logger, pino.DestinationStream>();

/** How long the last log lines may take to leave before the process exits without them. */
const FLUSH_GRACE_MS = 1_000;

/**
 * Exits with `code` once the log is flushed, or after FLUSH_GRACE_MS when it cannot be. pino
 * flushes its destination synchronously at exit, and sonic-boom 4.2's synchronous flush retries
 * a write that failed with anything but EAGAIN forever: with the reader of a log pipe gone
 * (EPIPE), `process.exit` would never return. So once our own flush is done or given up, that
 * second flush is turned off.
 */
export function flushAndExit(logger: pino.Logger, code: number): void {
  const exit = () => {
    const stream = destinations.get(logger) as { flushSync?: () => void } | undefined;
    if (stream?.flushSync !== undefined) stream.flushSync = () => undefined;
    process.exit(code);
  };
  setTimeout(exit, FLUSH_GRACE_MS);
  try {
    logger.flush(exit);
  } catch {
    exit();
  }
}

/**
 * Sends what libraries print to the console through the JSON log (ioredis, for one, prints a
 * plain-text warning on a password the server does not need), so every line the process writes
 * stays one JSON object. Only for a server process: tests and the library keep their console.
 */
export function routeConsole(logger: pino.Logger): void {
  const as = (level: 'info' | 'warn' | 'error') => (...args: unknown[]) => {
    logger[level]({ source: 'console' }, format(...args));
  };
  console.log = as('info');
  console.info = as('info');
  console.warn = as('warn');
  console.error = as('error');
}
