import { format } from 'node:util';
import pino from 'pino';
import type { LogLevel } from '../adapter/config.js';

/**
 * Structured JSON logs on stdout. Nothing here knows a caller's address or User-Agent; the app
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

/** What flushAndExit reads of pino's destination (a sonic-boom stream, or a test's writable). */
interface Destination {
  _writing?: boolean;
  flushSync?: () => void;
  once?: (event: string, listener: () => void) => unknown;
}

/**
 * Exits with `code` once the log is written, or after FLUSH_GRACE_MS when it cannot be. Two
 * things in sonic-boom 4.2 (pino's destination) shape this. Its `flush(cb)` calls back at once
 * when `minLength` is 0 (ours), even while a write is still in flight, so exiting from that
 * callback dropped the last line now and then ("stopped" missing after a clean SIGTERM, seen in
 * CI); so the exit waits for the stream's `drain` (emitted when its last write has completed) or
 * `error`. And pino flushes its destination synchronously at exit, where sonic-boom's synchronous
 * flush retries a write that failed with anything but EAGAIN forever: with the reader of a log
 * pipe gone (EPIPE), `process.exit` would never return. So once our own wait is over, that second
 * flush is turned off.
 */

export function flushAndExit(logger: pino.Logger, code: number): void {
  const stream = destinations.get(logger) as unknown as Destination | undefined;
  let done = false;
  const exit = () => {
    if (done) return;
    done = true;
    if (stream?.flushSync !== undefined) stream.flushSync = () => undefined;
    process.exit(code);
  };
  setTimeout(exit, FLUSH_GRACE_MS);
  // A write in flight: its completion is the stream's `drain` (or its failure, `error`).
  if (stream?._writing === true && stream.once !== undefined) {
    stream.once('drain', exit);
    stream.once('error', exit);
    return;
  }
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
