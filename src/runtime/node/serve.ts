import cluster from 'node:cluster';
import type pino from 'pino';
import { createApp } from '../../app.js';
import { startCluster, workerCount } from './cluster.js';
import type { Config } from './config.js';
import { nodeListener } from './listener.js';
import { proxyProtocolFront } from './proxy-protocol.js';
import { createNodeServer, listen, trackSessions, type NodeServer } from './server.js';
import { nodeServices } from './services.js';

/** How long shutdown waits for the events queue to reach the collector. */
const EVENTS_FLUSH_MS = 3_000;

export interface RunningServer {
  server: NodeServer;
  port: number;
  /** Stops accepting, lets in-flight requests finish within `graceMs`, then closes the rest. */
  drain(graceMs?: number): Promise<void>;
}

/**
 * `netdiag serve`: with NETDIAG_WORKERS > 1 this process becomes the cluster's primary and its
 * workers, forked from it (node:cluster re-runs the same command in each), run the server.
 */
export function startServe(config: Config, logger: pino.Logger): Promise<{ drain(graceMs: number): Promise<void> }> {
  return cluster.isPrimary && workerCount(config) > 1 ? startCluster(config, logger) : startServer(config, logger);
}

export async function startServer(config: Config, logger: pino.Logger): Promise<RunningServer> {
  const services = nodeServices(config, logger);
  await services.limiterRuntime.ready();
  const app = createApp(services);
  const server = createNodeServer(config, nodeListener(app, logger));
  const sessions = trackSessions(server);

  // With PROXY protocol a TCP front listens and hands each connection, header removed, to the
  // HTTP server; otherwise the HTTP server listens itself.
  const front = config.proxyProtocol
    ? proxyProtocolFront((socket) => server.emit('connection', socket), config.trust)
    : undefined;
  const listening = front ?? server;
  const port = await listen(listening, config.port, config.host);
  logger.info({ port, host: config.host ?? null, tls: config.tls !== undefined }, 'listening');

  const drain = (graceMs = 5_000) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        // In-flight work that outlives the grace period is cut off so shutdown stays bounded.
        if ('closeAllConnections' in server) server.closeAllConnections();
        for (const session of sessions) session.destroy();
      }, graceMs);
      timer.unref();
      front?.close();
      server.close(() => {
        clearTimeout(timer);
        // Then the events queue is flushed (SPEC-NOTES, lifecycle), within its own bound.
        void Promise.all([services.probes.close(), services.events.close(EVENTS_FLUSH_MS)]).then(() => {
          services.limiterRuntime.close();
          resolve();
        });
      });
      if ('closeIdleConnections' in server) server.closeIdleConnections();
      for (const session of sessions) session.close();
    });

  return { server, port, drain };
}
