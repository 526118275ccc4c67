// The command line's node:http transport (src/cli/speedtest/http-transport.ts) held to the load
// transport's conformance suite, against real servers on loopback and the fake peer.
import { afterAll, beforeAll } from 'vitest';
import { loadTransportConformance, type ConformancePeers } from '../../src/common/speedtest/load-transport.conformance.js';
import { HttpLoadTransport } from '../../src/cli/speedtest/http-transport.js';
import { HELD_ROUND_TRIP_MS, startFakeLoadPeer, type FakeLoadPeer } from '../support/fake-load-peer.js';
import { LOOPBACK_TRANSFERS, startTestServer, type TestServer } from '../support/server.js';

let open: TestServer;
let limited: TestServer;
let fake: FakeLoadPeer;

beforeAll(async () => {
  open = await startTestServer({ ...LOOPBACK_TRANSFERS, NETDIAG_EVENTS_SINK: 'none' });
  limited = await startTestServer({ ...LOOPBACK_TRANSFERS, NETDIAG_EVENTS_SINK: 'none', NETDIAG_RATE_LIMITS: 'speedtest=1' });
  fake = await startFakeLoadPeer();
}, 30_000);

afterAll(async () => {
  await Promise.all([open.close(), limited.close(), fake.close()]);
});

const peers = (): ConformancePeers => ({ open: open.url, limited: limited.url, fake: { url: fake.url, heldRoundTripMs: HELD_ROUND_TRIP_MS, holdTransfers: fake.holdTransfers, uploads: fake.uploads } });

loadTransportConformance('node:http', peers, (base) => {
  const transport = new HttpLoadTransport(base, 10_000, new AbortController().signal);
  return Promise.resolve({
    transport,
    close: () => {
      transport.close();
      return Promise.resolve();
    },
  });
});
