// The logger port. Its conformance suite is logger.conformance.ts beside it: pino (Node), the
// console logger (Workers) and the suites' capturing logger run it.

/** Structured logger port; pino satisfies it. Never pass a caller's address or User-Agent. */
export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}
