// A whole local deployment for the suites that use it as a person would (the page, the CLI):
// the real server with Knot as its DNS upstream, one `netdiag probe` as region weur, and an
// analytics collector as its events sink.
import { startCollector, type Collector } from './collector.js';
import { startKnot, type Knot } from './knot.js';
import { startProbeProcess, type ProbeProcess } from './probe.js';
import { startTestServer, type TestServer } from './server.js';
import type { Env } from '../../src/runtime/node/adapter/config.js';

export interface Deployment {
  knot: Knot;
  probe: ProbeProcess;
  collector: Collector;
  server: TestServer;
  close(): Promise<void>;
}

/** `env` adds to (or overrides) the server's configuration. */
export async function startDeployment(env: Env = {}): Promise<Deployment> {
  const knot = await startKnot();
  const probe = await startProbeProcess();
  const collector = await startCollector('accept');
  const server = await startTestServer({
    NETDIAG_DNS_UPSTREAM: `udp://127.0.0.1:${String(knot.port)}`,
    NETDIAG_PROBES: `weur=http://127.0.0.1:${String(probe.port)}`,
    NETDIAG_EVENTS_SINK: collector.url,
    ...env,
  });
  return {
    knot,
    probe,
    collector,
    server,
    close: async () => {
      await server.close();
      await collector.close();
      await probe.kill('SIGTERM');
      await knot.close();
    },
  };
}
