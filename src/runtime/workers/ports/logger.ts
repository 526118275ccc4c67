import type { LogLevel } from '../../../core/config/vars.js';
import type { Logger } from '../../../core/ports/logger.js';

const RANK: Readonly<Record<LogLevel, number>> = { debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity };

/** An error as JSON can carry it: its class and message, never a stack a reader would not need. */
function plain(value: unknown): unknown {
  return value instanceof Error ? { type: value.name, message: value.message } : value;
}

/**
 * The record as one line of JSON, whatever its fields hold: a logger never throws. JSON.stringify
 * refuses a circular object and a BigInt; only then is each written as pino writes it.
 */
function jsonLine(line: Record<string, unknown>): string {
  try {
    return JSON.stringify(line);
  } catch {
    const seen = new WeakSet<object>();
    return JSON.stringify(line, (_key, value: unknown) => {
      if (typeof value === 'bigint') return Number(value);
      if (typeof value === 'object' && value !== null) {
        if (seen.has(value)) return '[Circular]';
        seen.add(value);
      }
      return value;
    });
  }
}

/**
 * Structured JSON lines on the console, which Workers Logs and `wrangler tail` collect: the same
 * shape as Node's pino lines (`level` as pino's numbers, `time`, `msg`), so one query reads both.
 */
export function consoleLogger(level: LogLevel): Logger {
  const min = RANK[level];
  const write = (rank: number, obj: object, msg?: string) => {
    if (rank < min) return;
    const line: Record<string, unknown> = { level: rank, time: Date.now() };
    for (const [key, value] of Object.entries(obj)) line[key] = plain(value);
    if (msg !== undefined) line.msg = msg;
    const text = jsonLine(line);
    if (rank >= RANK.error) console.error(text);
    else console.log(text);
  };
  return {
    debug: (obj, msg) => { write(RANK.debug, obj, msg); },
    info: (obj, msg) => { write(RANK.info, obj, msg); },
    warn: (obj, msg) => { write(RANK.warn, obj, msg); },
    error: (obj, msg) => { write(RANK.error, obj, msg); },
  };
}
