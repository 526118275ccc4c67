import cluster, { type Worker } from 'node:cluster';
import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { SYSTEM_CLOCK } from '../../../core/ports/clock.js';
import { MemoryLimiterStore } from '../../../core/ratelimit/memory-store.js';
import { answerLimiterRequests } from '../ports/limiter-store/cluster-store.js';
import type { Config } from './config.js';
import { startMetricsServer, type MetricsServer } from '../metrics-listener.js';
import type { Logger } from '../../../core/ports/logger.js';

interface RunningCluster {
  port: number;
  drain(graceMs: number): Promise<void>;
}

/** A worker that dies is replaced after this pause, so a crash loop cannot spin the CPU. */
const RESTART_DELAY_MS = 1_000;

export function workerCount(config: Pick<Config, 'workers'>): number {
  return config.workers === 'auto' ? availableParallelism() : config.workers;
}

/**
 * The primary of `NETDIAG_WORKERS` > 1: forks the workers (each a full `netdiag serve` on the
 * same port; node:cluster hands connections out round-robin), answers their rate-limit hits
 * from one in-process store when there is no Redis, so N workers grant the limit once, gives
 * them one hash secret when none is configured, replaces a worker that dies,
 * and drains them all on shutdown.
 */
export async function startCluster(config: Config, logger: Logger): Promise<RunningCluster> {
  const count = workerCount(config);
  const store = new MemoryLimiterStore(SYSTEM_CLOCK);
  // Workers must hash a source the same way to share its window. Without a configured key the
  // primary generates one (it never leaves memory and the workers' environment); with Redis the
  // key is required configuration, the same on every instance.
  const env = config.rateLimitKey === undefined ? { NETDIAG_RATE_LIMIT_KEY: randomBytes(32).toString('base64') } : {};
  let stopping = false;
  const workers = new Set<Worker>();

  const fork = (): Worker => {
    const worker = cluster.fork(env);
    workers.add(worker);
    if (config.redisUrl === undefined) answerLimiterRequests(worker, store);
    // A worker's channel failing (it died mid-exchange) is that worker's end, handled by 'exit';
    // unlistened, the 'error' event would kill the primary.
    worker.on('error', (err: Error & { code?: string }) => {
      logger.warn({ worker: worker.id, reason: err.code ?? err.name }, 'worker channel error');
    });
    worker.on('exit', (code, signal) => {
      workers.delete(worker);
      if (stopping) return;
      logger.error({ worker: worker.id, code, signal }, 'worker exited; starting another');
      setTimeout(() => {
        if (!stopping) fork();
      }, RESTART_DELAY_MS).unref();
    });
    return worker;
  };

  const listening = Array.from({ length: count }, () => {
    const worker = fork();
    return new Promise<number>((resolve, reject) => {
      worker.once('listening', (address) => {
        resolve(address.port);
      });
      worker.once('exit', (code) => {
        reject(new Error(`a worker exited with ${String(code)} before it listened`));
      });
    });
  });
  const ports = await Promise.all(listening);
  const port = ports[0] ?? 0;
  // The workers' metrics, summed (counters, histograms, most gauges) by prom-client's aggregator.
  let metricsServer: MetricsServer | undefined;
  if (config.metrics !== undefined) {
    const { AggregatorRegistry } = await import('prom-client');
    const aggregator = new AggregatorRegistry();
    metricsServer = await startMetricsServer(config.metrics, { contentType: aggregator.contentType, render: () => aggregator.clusterMetrics() }, logger);
  }
  logger.info({ port, workers: count, role: 'primary' }, 'listening');

  const drain = async (graceMs: number) => {
    stopping = true;
    const exits = [...workers].map((w) => new Promise<void>((resolve) => w.once('exit', () => { resolve(); })));
    // Each worker drains itself on SIGTERM (in-flight requests, events flush) and exits 0.
    for (const worker of workers) worker.process.kill('SIGTERM');
    const timer = setTimeout(() => {
      for (const worker of workers) worker.process.kill('SIGKILL');
    }, graceMs + 5_000);
    await Promise.all(exits);
    clearTimeout(timer);
    await metricsServer?.close();
  };
  return { port, drain };
}
