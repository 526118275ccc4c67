// What the primary thread and its worker threads say to each other (threads.ts, thread-entry.ts).

/** A worker thread's `workerData`. */
export interface ThreadData {
  /** The port to listen on with SO_REUSEPORT: 0 for the first thread when the operator named none. */
  port: number;
  /** The keyed hash's secret, the same in every thread. */
  rateLimitKey: string;
  /** The limiter table every thread counts in; none with Redis. */
  limiterTable: SharedArrayBuffer | undefined;
}

export type ToThread =
  | { type: 'drain'; graceMs: number }
  | { type: 'metrics'; id: number };

export type FromThread =
  | { type: 'listening'; port: number }
  /** A start-up fault: `variable` when it is the configuration's (a geo database that is not one). */
  | { type: 'failed'; message: string; variable: string | undefined }
  | { type: 'metrics'; id: number; metrics: unknown[] };
