import type { Logger } from '../../core/ports.js';
import type { LogLevel } from '../../core/config/vars.js';

const RANK: Readonly<Record<LogLevel, number>> = { debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity };

/** An error as JSON can carry it: its class and message, never a stack a reader would not need. */
function plain(value: unknown): unknown {
  return value instanceof Error ? { type: value.name, message: value.message } : value;
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
    const text = JSON.stringify(line);
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
