// Packet loss from the command line, through Debian's coturn, held to a reference: a lossy relay
// (test/support/lossy-relay.ts) between the client and coturn drops a known share of the
// numbered datagrams and counts each one; the loss the client reports must be exactly what the
// relay dropped. And where loss cannot be measured (no TURN server configured, one that never
// answers), the client says so and why, never 0%.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientFor } from '../../src/cli/api/client.js';
import { packetLoss } from '../../src/cli/speedtest/loss.js';
import { startSilentUdp } from '../support/silent-udp.js';
import { startCoturn, type Coturn } from '../support/coturn.js';
import { startLossyRelay, type LossyRelay } from '../support/lossy-relay.js';
import { runCli } from '../support/process.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';

const ready = requireCommands('packet loss through TURN', ['turnserver'], 'coturn');
/** The engine's plan, with a shorter deadline for a server that never answers. */
const PLAN = { datagrams: 1000, batchSize: 10, batchEveryMs: 10, waitMs: 3000, requestTimeoutMs: 3000 };

interface Report {
  packet_loss_percent: number | null;
  packet_loss: { server: string; sent: number; received: number } | null;
  notes: string[];
}

describe.skipIf(!ready)('packet loss through the deployment TURN server', () => {
  const secret = randomBytes(32).toString('base64');
  let turn: Coturn;
  const relays: LossyRelay[] = [];
  const servers: TestServer[] = [];

  beforeAll(async () => {
    turn = await startCoturn(secret);
  }, 30_000);
  afterAll(async () => {
    for (const relay of relays) relay.close();
    for (const server of servers) await server.close();
    await turn.close();
  });

  /** A deployment whose TURN URL is a lossy relay in front of coturn. */
  async function throughRelay(share: number): Promise<{ relay: LossyRelay; server: TestServer }> {
    const relay = await startLossyRelay({ host: '127.0.0.1', port: turn.port }, share, 42);
    relays.push(relay);
    // Two light tests within a minute from one address make more than the default 600 speed-test
    // requests, and the second met a 429: a limit these tests, which count datagrams, do not meet.
    const server = await startTestServer({ NETDIAG_TURN_URL: `turn:127.0.0.1:${String(relay.port)}`, NETDIAG_TURN_SECRET: secret, NETDIAG_RATE_LIMITS: 'turn=100,speedtest=100000' });
    servers.push(server);
    return { relay, server };
  }

  it('with nothing dropped, every datagram comes back: 0.0%, measured', async () => {
    const { relay, server } = await throughRelay(0);
    const loss = await packetLoss(clientFor(server.url, 5000), PLAN);
    expect(loss).toMatchObject({ measured: true, sent: 1000, received: 1000, lossPercent: 0, notSent: {} });
    expect(relay.passed).toEqual({ up: 1000, down: 1000 });
  });

  it('with 5% dropped each way, 10 runs in a row: each reports exactly what the relay dropped, or not trustworthy and why', async () => {
    // No second try: a run whose datagrams this computer lost itself must say so, not miss.
    const { relay, server } = await throughRelay(0.05);
    let figures = 0;
    for (let run = 1; run <= 10; run++) {
      relay.reset();
      // 1 s for stragglers rather than 3: on loopback they come within milliseconds, and ten runs fit in 20 s.
      const loss = await packetLoss(clientFor(server.url, 5000), { ...PLAN, waitMs: 1000 });
      const dropped = relay.dropped.up + relay.dropped.down;
      process.stdout.write(`CLI packet loss ${String(run)}/10: ${loss.measured ? `${String(loss.lossPercent)}% (${String(loss.sent - loss.received)} of ${String(loss.sent)})` : `not measured: ${loss.reason}`} | the relay dropped ${String(dropped)} (${JSON.stringify(relay.dropped)})\n`);
      if (!loss.measured) {
        expect(loss).toMatchObject({ untrusted: true, reason: expect.stringMatching(/could not be sent from this computer|dropped by this computer/) as unknown });
        continue;
      }
      expect(loss.sent - loss.received, `run ${String(run)}`).toBe(dropped);
      expect(loss.lossPercent).toBeCloseTo((100 * dropped) / 1000, 6);
      // About 5% of 1000 going out and 5% of what came through coming back: near 9.75%.
      expect(dropped).toBeGreaterThan(60);
      expect(dropped).toBeLessThan(140);
      figures += 1;
    }
    // A client that never trusts its count would pass the loop above and measure nothing.
    expect(figures).toBeGreaterThan(0);
  }, 60_000);

  it("with the datagrams coming back all at once, faster than the client reads: not trustworthy, and the kernel's count of what this computer dropped", async () => {
    // Held by the relay for 1.5 s (the client's 3 s wait for stragglers covers it), then sent in
    // one go from this process: the client, in this process too, reads none until the burst is
    // over, so its socket's receive buffer overflows. Counting those as lost on the network
    // would report far more than the relay dropped.
    const relay = await startLossyRelay({ host: '127.0.0.1', port: turn.port }, 0.05, 42, { holdDownMs: 1500 });
    relays.push(relay);
    const server = await startTestServer({ NETDIAG_TURN_URL: `turn:127.0.0.1:${String(relay.port)}`, NETDIAG_TURN_SECRET: secret, NETDIAG_RATE_LIMITS: 'turn=100' });
    servers.push(server);
    const loss = await packetLoss(clientFor(server.url, 5000), PLAN);
    process.stdout.write(`CLI packet loss with a burst: ${JSON.stringify(loss)} | the relay dropped ${JSON.stringify(relay.dropped)}\n`);
    expect(loss).toMatchObject({ measured: false, untrusted: true, reason: expect.stringMatching(/^[0-9]+ that came back were dropped by this computer before the client read them/) as unknown });
  });

  it('netdiag speedtest reports the same, in JSON and in words', async () => {
    const { relay, server } = await throughRelay(0.05);
    const json = await runCli(['speedtest', '--mode', 'light', '--json', '--no-analytics'], { NETDIAG_URL: server.url }, 120_000);
    expect(json.code, json.stderr).toBe(0);
    const report = JSON.parse(json.stdout) as Report;
    const dropped = relay.dropped.up + relay.dropped.down;
    expect(report.packet_loss).toMatchObject({ server: `turn:127.0.0.1:${String(relay.port)}`, sent: 1000 });
    expect((report.packet_loss?.sent ?? 0) - (report.packet_loss?.received ?? 0)).toBe(dropped);
    expect(report.packet_loss_percent).toBeCloseTo((100 * dropped) / 1000, 2);
    relay.reset();
    const words = await runCli(['speedtest', '--mode', 'light', '--no-analytics'], { NETDIAG_URL: server.url }, 120_000);
    expect(words.code, words.stderr).toBe(0);
    const lost = relay.dropped.up + relay.dropped.down;
    expect(words.stdout).toContain(`${((100 * lost) / 1000).toFixed(1)}% (${String(lost)} of 1000 datagrams, through turn:127.0.0.1:${String(relay.port)})`);
  }, 240_000);

  it('with no TURN server configured: not measured, and why (never 0%)', async () => {
    const server = await startTestServer({});
    servers.push(server);
    const loss = await packetLoss(clientFor(server.url, 5000), PLAN);
    expect(loss).toEqual({ measured: false, reason: 'this deployment has no TURN server to measure it through' });
  });

  it('with a TURN server that never answers (UDP blocked): not measured, and why', async () => {
    const silent = await startSilentUdp();
    try {
      const server = await startTestServer({ NETDIAG_TURN_URL: `turn:127.0.0.1:${String(silent.port)}`, NETDIAG_TURN_SECRET: secret });
      servers.push(server);
      const loss = await packetLoss(clientFor(server.url, 5000), PLAN);
      expect(loss.measured).toBe(false);
      expect(loss.measured ? '' : loss.reason).toBe(`the TURN server 127.0.0.1:${String(silent.port)} did not answer over UDP within 3 s (a firewall, a VPN or a network that blocks UDP)`);
    } finally {
      silent.close();
    }
  });
});
