import { isMainThread } from 'node:worker_threads';
import type pino from 'pino';
import { createApp } from '../../../app/app.js';
import { isResponsivenessPath } from '../../../features/speedtest/responsiveness.js';
import { startThreads, workerCount } from './threads.js';
import type { Config } from './config.js';
import { nodeListener } from './listener.js';
import type { Socket } from 'node:net';
import { acceptProxyProtocol } from './proxy-protocol.js';
import { closeAllHttp1, closeIdleHttp1, createNodeServer, listen, trackSessions, type NodeServer } from './server.js';
import { nodeServices } from './services.js';
import { configurationSummary } from './config-summary.js';
import { notsentLowatWarning, readNotsentLowat, SUGGESTED_NOTSENT_LOWAT } from './notsent-lowat.js';
import type { NodeMetrics } from '../ports/metrics.js';
import { startMetricsServer } from '../metrics-listener.js';

/** How long shutdown waits for the events queue to reach the collector. */
const EVENTS_FLUSH_MS = 3_000;

export interface RunningServer {
  server: NodeServer;
  port: number;
  /** The metrics listener's port, when this thread serves one. */
  metricsPort: number | undefined;
  /** What this thread records, when metrics are on: a worker thread hands it to its primary. */
  metrics: NodeMetrics | undefined;
  /** Stops accepting, lets in-flight requests finish within `graceMs`, then closes the rest. */
  drain(graceMs?: number): Promise<void>;
}

/** The oldest Node the service is built and tested on (package.json `engines`). */
const SUPPORTED_NODE = '22.12';

/** Whether `version` (`process.versions.node`) is at least SUPPORTED_NODE. */
export function nodeIsSupported(version: string): boolean {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return major > 22 || (major === 22 && minor >= 12);
}

/**
 * `netdiag serve`: with NETDIAG_WORKERS > 1 this thread becomes the primary and its worker
 * threads (thread-entry.ts) run the server.
 */
export function startServe(config: Config, logger: pino.Logger): Promise<{ drain(graceMs: number): Promise<void> }> {
  // Said once, by the primary thread (the worker threads start their servers directly).
  logger.info(configurationSummary(config, workerCount(config)), 'configuration');
  // A production install runs on the machine's own Node, which may be older than the one it was
  // built and tested on (a clone's npm scripts bring their own Node 22); said, not refused.
  if (!nodeIsSupported(process.versions.node)) logger.warn({ node: process.versions.node, supported: SUPPORTED_NODE }, `Node ${process.versions.node} is older than the ${SUPPORTED_NODE} netdiag is built and tested on`);
  // Only where the responsiveness endpoints are served: they are what the setting affects.
  const lowat = config.speedTestTargets ? notsentLowatWarning(readNotsentLowat()) : undefined;
  if (lowat !== undefined) logger.warn({ sysctl: 'net.ipv4.tcp_notsent_lowat', suggested: SUGGESTED_NOTSENT_LOWAT }, lowat);
  return workerCount(config) > 1 ? startThreads(config, logger) : startServer(config, logger);
}

/**
 * The server of a process alone, or of one worker thread (`reusePort`: its siblings listen on the
 * same port).
 */
export async function startServer(config: Config, logger: pino.Logger, reusePort = false): Promise<RunningServer> {
  // A worker thread records too; its primary serves every thread's metrics, aggregated.
  const metrics = config.metrics === undefined ? undefined : (await import('../ports/metrics.js')).nodeMetrics();
  const { services, lifecycle } = nodeServices(config, logger, metrics);
  const metricsServer = config.metrics !== undefined && metrics !== undefined && isMainThread
    ? await startMetricsServer(config.metrics, { contentType: metrics.registry.contentType, render: () => metrics.registry.metrics() }, logger)
    : undefined;
  await lifecycle.limiter.ready();
  const app = createApp(services);
  const server = createNodeServer(config, nodeListener(app, logger, config.publicUrl), isResponsivenessPath);
  const sessions = trackSessions(server);
  // Every socket, so a drain past its grace closes whatever no session or HTTP/1 list holds: after
  // a responsiveness client closed its HTTP/2 connections and exited, Node kept some of their TLS
  // sockets open with no session left (1 to 8 of them in 2 of 5 runs), and the drain waited on
  // them until its caller gave up.
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  // With PROXY protocol the same listening server reads and removes the header first, so every
  // bound and the drain below hold there exactly as without it.
  const awaitingProxyHeader = config.proxyProtocol ? acceptProxyProtocol(server, config.trust, config.timeouts.headersMs) : new Set<Socket>();
  const port = await listen(server, config.port, config.host, reusePort);
  logger.info({ port, host: config.host ?? null, tls: config.tls !== undefined, proxy_protocol: config.proxyProtocol }, 'listening');

  const drain = (graceMs = 5_000) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        // In-flight work that outlives the grace period is cut off so shutdown stays bounded.
        closeAllHttp1(server);
        for (const session of sessions) session.destroy();
        for (const socket of sockets) socket.destroy();
      }, graceMs);
      timer.unref();
      server.close(() => {
        clearTimeout(timer);
        // Then the events queue is flushed (docs/api.md, "Shutdown"), within its own bound.
        void Promise.all([lifecycle.probes.close(), lifecycle.events.close(EVENTS_FLUSH_MS), lifecycle.dns.close(), metricsServer?.close()]).then(() => {
          lifecycle.limiter.close();
          resolve();
        });
      });
      // Idle keep-alive connections and those still owing a PROXY header carry no request.
      closeIdleHttp1(server);
      for (const socket of awaitingProxyHeader) socket.destroy();
      for (const session of sessions) session.close();
    });

  return { server, port, metricsPort: metricsServer?.port, metrics, drain };
}
