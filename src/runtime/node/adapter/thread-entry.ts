// A worker thread of `netdiag serve` with NETDIAG_WORKERS > 1 (threads.ts starts it): the same
// configuration from the environment, a server of its own on the shared port, and answers to the
// primary thread's messages (drain, metrics). Signals go to the primary; it tells each thread.
import { parentPort, workerData } from 'node:worker_threads';
import { ConfigError } from '../../../core/config/table.js';
import { createLogger, flushAndExit, routeConsole } from '../ports/logger.js';
import { loadConfig } from './config.js';
import { startServer } from './serve.js';
import type { FromThread, ThreadData, ToThread } from './thread-messages.js';

const port = parentPort;
const data = workerData as ThreadData;

/**
 * Metrics of the whole process (CPU, resident memory, descriptors, start time) read the same in
 * every thread: the primary keeps one thread's value rather than summing them. Heap, event-loop
 * and request figures are each thread's own and are summed or averaged as prom-client does.
 */
function perProcessOnce(metrics: unknown[]): unknown[] {
  return metrics.map((m) => (typeof m === 'object' && m !== null && (m as { name?: unknown }).name?.toString().startsWith('process_') === true ? { ...m, aggregator: 'first' } : m));
}

async function main(): Promise<void> {
  if (port === null) throw new Error('thread-entry runs only as a worker thread');
  const config = { ...loadConfig(process.env), port: data.port, rateLimitKey: data.rateLimitKey };
  const logger = createLogger(config.logLevel);
  routeConsole(logger);
  const running = await startServer(config, logger, true).catch((err: unknown) => {
    const failed: FromThread = { type: 'failed', message: err instanceof Error ? err.message : String(err), variable: err instanceof ConfigError ? err.variable : undefined };
    port.postMessage(failed);
    flushAndExit(logger, 1);
    return undefined;
  });
  if (running === undefined) return;
  const { metrics } = running;
  port.on('message', (message: ToThread) => {
    if (message.type === 'drain') {
      void running.drain(message.graceMs).then(() => {
        flushAndExit(logger, 0);
      });
    } else if (metrics !== undefined) {
      void metrics.registry.getMetricsAsJSON().then((json) => {
        port.postMessage({ type: 'metrics', id: message.id, metrics: perProcessOnce(json) } satisfies FromThread);
      });
    }
  });
  port.postMessage({ type: 'listening', port: running.port } satisfies FromThread);
}

await main();
