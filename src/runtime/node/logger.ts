import pino from 'pino';
import type { LogLevel } from './config.js';

/**
 * Structured JSON logs on stdout. Nothing here knows a caller's address or User-Agent; the core
 * never hands them over (SPEC-NOTES, Privacy).
 */
export function createLogger(level: LogLevel, destination: pino.DestinationStream | number = 1): pino.Logger {
  return pino(
    {
      level,
      base: { service: 'netdiag' },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    typeof destination === 'number' ? pino.destination({ dest: destination, sync: false }) : destination,
  );
}
