// The round trips `netdiag servers` and `--server auto` choose by, against small real HTTP
// servers on loopback that hold each `/__down` answer a set time in user space (5, 30 and 80 ms)
// and count the connections made to them; one port with nothing listening; one server that
// answers too late.
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NEAREST_ROUND_TRIPS, type ListedServer } from '../../common/servers.js';
import { timeServers } from './round-trips.js';

interface Delayed {
  url: string;
  /** Connections opened to it so far. */
  connections(): number;
  /** The paths asked of it so far. */
  paths(): string[];
  close(): Promise<void>;
}

/** A server that answers every request after `delayMs` (the n-th after `delays[n]` where given), an empty 200. */
async function delayedServer(delayMs: number, delays: readonly number[] = []): Promise<Delayed> {
  let connections = 0;
  const paths: string[] = [];
  const server: Server = createServer((req, res) => {
    paths.push(req.url ?? '');
    setTimeout(() => {
      res.end();
    }, delays[paths.length - 1] ?? delayMs);
  });
  server.on('connection', () => connections++);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${String((server.address() as AddressInfo).port)}`,
    connections: () => connections,
    paths: () => [...paths],
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => {
        server.close(() => {
          resolve();
        });
      });
    },
  };
}

const listed = (name: string, url: string): ListedServer => ({ name, url, location: name, families: ['ipv4'] });

describe('timeServers', () => {
  let near: Delayed;
  let mid: Delayed;
  let far: Delayed;
  let slowFirst: Delayed;
  let closedUrl: string;

  beforeAll(async () => {
    [near, mid, far] = await Promise.all([delayedServer(5), delayedServer(30), delayedServer(80)]);
    // The first answer slowest, two more slow ones: the median of the last four is 150 ms and more,
    // that of all five 300 ms and more.
    slowFirst = await delayedServer(5, [400, 5, 5, 300, 300]);
    // A port that was just listened on and closed: nothing answers there.
    const gone = await delayedServer(0);
    closedUrl = gone.url;
    await gone.close();
  });
  afterAll(async () => {
    await Promise.all([near, mid, far, slowFirst].map((s) => s.close()));
  });

  it('times each server over one connection, asks /__down?bytes=0 each round trip, and keeps the list order', async () => {
    const timed = await timeServers([listed('far', far.url), listed('near', near.url), listed('mid', mid.url)]);
    expect(timed.map((t) => t.server.name)).toEqual(['far', 'near', 'mid']);
    for (const [t, s, floor] of [[timed[0], far, 80], [timed[1], near, 5], [timed[2], mid, 30]] as const) {
      expect(t?.error).toBeNull();
      // The delay is a floor each answer waits; how far above it the machine took is not asserted.
      expect(t?.medianMs).toBeGreaterThanOrEqual(floor);
      expect(s.connections()).toBe(1);
      expect(s.paths()).toEqual(Array<string>(NEAREST_ROUND_TRIPS).fill('/__down?bytes=0'));
    }
    expect(timed[1]?.medianMs).toBeLessThan(timed[2]?.medianMs ?? 0);
    expect(timed[2]?.medianMs).toBeLessThan(timed[0]?.medianMs ?? 0);
  });

  it('leaves out the first round trip, the one that opens the connection', async () => {
    const [t] = await timeServers([listed('slow-first', slowFirst.url)]);
    expect(t?.medianMs).toBeGreaterThanOrEqual(150);
    expect(t?.medianMs).toBeLessThan(300);
  });

  it('marks a server that refuses the connection, or answers past the deadline, unreachable with why', async () => {
    const timed = await timeServers([listed('gone', closedUrl), listed('far', far.url)], {}, 200);
    expect(timed[0]).toMatchObject({ medianMs: null, error: 'ECONNREFUSED' });
    // Five answers 80 ms apart cannot all come within 200 ms.
    expect(timed[1]).toMatchObject({ medianMs: null, error: 'no answer within 200 ms' });
  });
});
