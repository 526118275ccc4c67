// Deployments that list one another (NETDIAG_SERVERS, docs/operations.md): real `netdiag serve`
// processes on loopback, each reached through its own user-space delay line
// (test/support/delay-relay.ts) of a known round trip, and each listing every one by the delay
// line's URL, as a client sees them. Each server keeps an access log (NETDIAG_ACCESS_LOG: the
// route and status of each request, nothing about the caller), so a suite can tell which one a
// client measured against from the server's side.
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import { startDelayRelay, type DelayRelay } from './delay-relay.js';
import { serveCli, type Serving } from './process.js';
import { LOOPBACK_TRANSFERS } from './server.js';

export interface ListedDeployment {
  /** Its name in the list. */
  name: string;
  /** The round trip its delay line adds, ms. */
  roundTripMs: number;
  /** Its origin as listed: the delay line's. */
  url: string;
  serving: Serving;
  /** Requests its access log has shown so far for `route` (e.g. "/v1/health"). */
  requestsFor(route: string): number;
}

/** A free loopback port, so a delay line can be pointed at a server started after it. */
async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}

/**
 * One deployment per `{ name, roundTripMs }`, each behind a delay line of that round trip, all
 * listing all. `env` is added to every server's.
 */
export async function startListedDeployments(
  wanted: readonly { name: string; roundTripMs: number; location?: string }[],
  env: Record<string, string> = {},
): Promise<{ deployments: ListedDeployment[]; stop: () => Promise<void> }> {
  const relays: DelayRelay[] = [];
  const servings: Serving[] = [];
  const urls = () => relays.map((r) => `http://127.0.0.1:${String(r.port)}`);
  const stop = async () => {
    for (const serving of servings) {
      if (serving.child.exitCode === null) serving.child.kill('SIGTERM');
      await serving.exited;
    }
    for (const relay of relays) await relay.close();
  };
  try {
    const ports: number[] = [];
    for (const w of wanted) {
      const port = await freePort();
      ports.push(port);
      relays.push(await startDelayRelay({ host: '127.0.0.1', port }, w.roundTripMs / 2));
    }
    const list = wanted.map((w, i) => ({ name: w.name, url: urls()[i], location: w.location ?? `${w.roundTripMs} ms away`, families: ['ipv4'] }));
    for (const port of ports) {
      servings.push(
        await serveCli({
          PORT: String(port),
          NETDIAG_SERVERS: JSON.stringify(list),
          NETDIAG_ACCESS_LOG: 'on',
          NETDIAG_EVENTS_SINK: 'none',
          NETDIAG_RATE_LIMITS: 'speedtest=100000,ip=100000,probe=100000',
          ...LOOPBACK_TRANSFERS,
          ...env,
        }),
      );
    }
  } catch (err) {
    await stop();
    throw err;
  }
  const deployments = wanted.map((w, i): ListedDeployment => {
    const serving = servings[i] as Serving;
    return {
      name: w.name,
      roundTripMs: w.roundTripMs,
      url: urls()[i] ?? '',
      serving,
      requestsFor: (route) => serving.stdout().split('\n').filter((line) => line.includes(`"route":"${route}"`)).length,
    };
  });
  return { deployments, stop };
}
