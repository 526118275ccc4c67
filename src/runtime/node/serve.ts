import cluster from 'node:cluster';
import type pino from 'pino';
import { createApp } from '../../app.js';
import { startCluster, workerCount } from './cluster.js';
import type { Config } from './config.js';
import { nodeListener } from './listener.js';
import type { Socket } from 'node:net';
import { acceptProxyProtocol } from './proxy-protocol.js';
import { closeAllHttp1, closeIdleHttp1, createNodeServer, listen, trackSessions, type NodeServer } from './server.js';
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
  const server = createNodeServer(config, nodeListener(app, logger, config.publicUrl));
  const sessions = trackSessions(server);
  // With PROXY protocol the same listening server reads and removes the header first, so every
  // bound and the drain below hold there exactly as without it.
  const awaitingProxyHeader = config.proxyProtocol ? acceptProxyProtocol(server, config.trust, config.timeouts.headersMs) : new Set<Socket>();
  const port = await listen(server, config.port, config.host);
  logger.info({ port, host: config.host ?? null, tls: config.tls !== undefined, proxy_protocol: config.proxyProtocol }, 'listening');

  const drain = (graceMs = 5_000) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        // In-flight work that outlives the grace period is cut off so shutdown stays bounded.
        closeAllHttp1(server);
        for (const session of sessions) session.destroy();
      }, graceMs);
      timer.unref();
      server.close(() => {
        clearTimeout(timer);
        // Then the events queue is flushed (SPEC-NOTES, lifecycle), within its own bound.
        void Promise.all([services.probes.close(), services.events.close(EVENTS_FLUSH_MS), services.dnsRuntime.close()]).then(() => {
          services.limiterRuntime.close();
          resolve();
        });
      });
      // Idle keep-alive connections and those still owing a PROXY header carry no request.
      closeIdleHttp1(server);
      for (const socket of awaitingProxyHeader) socket.destroy();
      for (const session of sessions) session.close();
    });

  return { server, port, drain };
}
