import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { ConfigError } from '../../../core/config/table.js';
import { MAX_CAPACITY } from '../../../core/ratelimit/memory-store.js';
import { createSharedTable, freeLockOf, tableViews } from '../../../core/ratelimit/shared-table.js';
import type { Logger } from '../../../core/ports/logger.js';
import type { Config } from './config.js';
import { startMetricsServer, type MetricsServer } from '../metrics-listener.js';
import { listen } from './server.js';
import type { FromThread, ThreadData, ToThread } from './thread-messages.js';

interface RunningThreads {
  port: number;
  /** The worker threads serving now (a replaced one leaves, its successor joins). */
  threads: ReadonlySet<Worker>;
  /** The limiter table the threads count in, when there is no Redis (a fault harness takes its lock). */
  limiterTable: SharedArrayBuffer | undefined;
  drain(graceMs: number): Promise<void>;
}

/** A worker thread that ends is replaced after this pause, so a crash loop cannot spin the CPU. */
const RESTART_DELAY_MS = 1_000;
/** How long a scrape waits for every thread's metrics. */
const METRICS_TIMEOUT_MS = 5_000;

export function workerCount(config: Pick<Config, 'workers'>): number {
  return config.workers === 'auto' ? availableParallelism() : config.workers;
}

/**
 * Fails as a single process would when something else holds the port: the threads bind it with
 * SO_REUSEPORT, which would otherwise let them share it silently with another netdiag (its own
 * limiter table, so every caller's limit granted twice). A port of 0 is the kernel's choice, free.
 */
async function portIsFree(port: number, host: string | undefined): Promise<void> {
  if (port === 0) return;
  const probe = createServer();
  await listen(probe, port, host);
  await new Promise((resolve) => probe.close(resolve));
}

/** The metrics asked of the threads, each request waiting by its id for the thread's reply. */
class MetricsRequests {
  #next = 0;
  readonly #replies = new Map<number, (json: unknown[]) => void>();

  /** A thread's reply to request `id`. */
  answer(id: number, metrics: unknown[]): void {
    this.#replies.get(id)?.(metrics);
  }

  /** Every thread's metrics, or a fault when one does not send them in time. */
  collect(threads: ReadonlySet<Worker>): Promise<unknown[][]> {
    return Promise.all([...threads].map((thread) => new Promise<unknown[]>((resolve, reject) => {
      const id = this.#next++;
      const timer = setTimeout(() => {
        this.#replies.delete(id);
        reject(new Error('a worker thread did not send its metrics in time'));
      }, METRICS_TIMEOUT_MS);
      this.#replies.set(id, (json) => {
        clearTimeout(timer);
        this.#replies.delete(id);
        resolve(json);
      });
      thread.postMessage({ type: 'metrics', id } satisfies ToThread);
    })));
  }
}

/** The /metrics listener of the primary, when configured: every thread's metrics summed (prom-client's aggregation). */
async function summedMetricsServer(config: Config, threads: ReadonlySet<Worker>, requests: MetricsRequests, logger: Logger): Promise<MetricsServer | undefined> {
  if (config.metrics === undefined) return undefined;
  const { AggregatorRegistry, Registry } = await import('prom-client');
  return startMetricsServer(config.metrics, {
    contentType: Registry.PROMETHEUS_CONTENT_TYPE,
    render: async () => AggregatorRegistry.aggregate(await requests.collect(threads)).metrics(),
  }, logger);
}

/** Tells every thread to drain itself (in-flight requests, events flush) and end; ends those still running after the grace. */
async function drainThreads(threads: ReadonlySet<Worker>, graceMs: number): Promise<void> {
  const exits = [...threads].map((t) => new Promise<void>((resolve) => t.once('exit', () => { resolve(); })));
  for (const thread of threads) thread.postMessage({ type: 'drain', graceMs } satisfies ToThread);
  const timer = setTimeout(() => {
    for (const thread of threads) void thread.terminate();
  }, graceMs + 5_000);
  await Promise.all(exits);
  clearTimeout(timer);
}

/**
 * The primary thread of `NETDIAG_WORKERS` > 1: starts the worker threads (each a full server on
 * the same port with SO_REUSEPORT, the kernel spreading connections over them), gives them one
 * limiter table in shared memory when there is no Redis (so N threads grant the limit once, with
 * no message per request) and one hash secret when none is configured, serves their metrics
 * summed, replaces a thread that ends, and drains them all on shutdown.
 */
export async function startThreads(config: Config, logger: Logger): Promise<RunningThreads> {
  const count = workerCount(config);
  const limiterTable = config.redisUrl === undefined ? createSharedTable(MAX_CAPACITY) : undefined;
  // Threads must hash a source the same way to share its window. Without a configured key the
  // primary generates one (it never leaves this process's memory); with Redis the key is
  // required configuration, the same on every instance.
  const rateLimitKey = config.rateLimitKey ?? randomBytes(32).toString('base64');
  const threads = new Set<Worker>();
  let stopping = false;
  const metricsRequests = new MetricsRequests();

  await portIsFree(config.port, config.host);

  /** Starts a thread on `port`; settles with the port it listens on, or its start-up fault. */
  const start = (port: number): Promise<number> => {
    const data: ThreadData = { port, rateLimitKey, limiterTable };
    const thread = new Worker(new URL('./thread-entry.js', import.meta.url), { workerData: data });
    // Read now: a thread that has ended reads -1 (Node's docs), and its lock id is needed then.
    const { threadId } = thread;
    threads.add(thread);
    const listening = new Promise<number>((resolve, reject) => {
      thread.on('message', (message: FromThread) => {
        if (message.type === 'listening') resolve(message.port);
        else if (message.type === 'failed') reject(message.variable === undefined ? new Error(message.message) : new ConfigError(message.variable, message.message));
        else metricsRequests.answer(message.id, message.metrics);
      });
      thread.once('exit', (code) => {
        reject(new Error(`a worker thread exited with ${String(code)} before it listened`));
      });
    });
    // An uncaught fault ends that thread alone; 'exit' follows and replaces it.
    thread.on('error', (err) => {
      logger.error({ worker: threadId, reason: err.name }, 'worker thread failed');
    });
    thread.once('exit', (code) => {
      threads.delete(thread);
      // It may have been ended holding the table's lock: the others must not wait on it.
      if (limiterTable !== undefined && freeLockOf(tableViews(limiterTable), threadId + 1)) logger.warn({ worker: threadId }, 'a worker thread ended holding the limiter table\'s lock: freed');
      if (stopping) return;
      logger.error({ worker: threadId, code }, 'worker exited; starting another');
      setTimeout(() => {
        if (!stopping) start(actualPort).catch((err: unknown) => { logger.error({ reason: err instanceof Error ? err.message : String(err) }, 'a replacement worker thread failed to start'); });
      }, RESTART_DELAY_MS).unref();
    });
    return listening;
  };

  let actualPort = config.port;
  try {
    // The first picks the port when it is 0; the others then join it.
    actualPort = await start(config.port);
    await Promise.all(Array.from({ length: count - 1 }, () => start(actualPort)));
  } catch (err) {
    stopping = true;
    await Promise.all([...threads].map((t) => t.terminate()));
    throw err;
  }

  const metricsServer = await summedMetricsServer(config, threads, metricsRequests, logger);
  logger.info({ port: actualPort, workers: count, role: 'primary' }, 'listening');

  const drain = async (graceMs: number) => {
    stopping = true;
    await drainThreads(threads, graceMs);
    await metricsServer?.close();
  };
  return { port: actualPort, threads, limiterTable, drain };
}
