// The ports every layer may take from a runtime: time, logging and work that outlives a
// response. A leaf: it imports nothing of ours, so no module that needs one of these has to
// import the module that wires capabilities together (src/app/services.ts).

/**
 * Work that must outlive the response it was started by (a batch to a collector, a recovery
 * probe). Workers end an isolate's work with the response unless it is handed to `waitUntil`;
 * a Node process lives on, so there it only has to not be lost.
 */
export type Defer = (work: Promise<unknown>) => void;

export interface Clock {
  /** Wall-clock milliseconds since the epoch (for timestamps and rate-limit windows). */
  now(): number;
}

/** Structured logger port; pino satisfies it. Never pass a caller's address or User-Agent. */
export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}
