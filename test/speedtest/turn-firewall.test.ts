// The TURN host as docs/operations.md documents it, in two network namespaces holding the
// documented addresses themselves (test/support/turn-lab.ts), its configuration read from the
// document and its documented firewall (nft ruleset and sysctl) loaded there. Fault 1 of issue
// 37: the configuration relayed to any public address and to the host's own other addresses,
// and nothing kept relayed datagrams from the host's own UDP services. Here a peer on the
// internet and the host's other address get 403 and receive nothing; a UDP service on the relay
// address (an allowed peer, since a loss test relays to it) is reached without the firewall and
// not with it; and two allocations still relay to each other, as a loss test needs.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configurationComplaints, documentedSetting, uclient } from '../support/coturn.js';
import { send } from '../support/http.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';
import { INTERNET_PEER, TURN_HOST, TURN_HOST_OTHER, canMakeTurnLab, startTurnNetLab, type TurnNetLab } from '../support/turn-lab.js';

const PATH = '/v1/speed-test/turn-credentials';

interface Credentials {
  username: string;
  credential: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const root = canMakeTurnLab();
if (!root) process.stderr.write('\n*** SKIPPED the TURN host lab: it needs root for network namespaces ***\n\n');
const labReady = root && requireCommands('TURN host lab', ['turnserver', 'turnutils_uclient', 'nft', 'ip'], 'coturn nftables iproute2');

describe.skipIf(!labReady)('the documented TURN host in a network namespace, with its documented firewall', () => {
  const secret = randomBytes(32).toString('base64');
  let lab: TurnNetLab;
  let server: TestServer;
  const SERVICE_PORT = 53;
  const PEER_PORT = 5000;

  beforeAll(async () => {
    lab = await startTurnNetLab(secret);
    await lab.internet.listen(INTERNET_PEER, PEER_PORT);
    await lab.host.listen(TURN_HOST_OTHER, PEER_PORT);
    await lab.host.listen(TURN_HOST, SERVICE_PORT);
    server = await startTestServer({ NETDIAG_TURN_URL: lab.turn.url, NETDIAG_TURN_SECRET: secret, NETDIAG_TRUST_PROXY: 'loopback' });
  }, 30_000);
  afterAll(async () => {
    await server.close();
    await lab.destroy();
  });

  const mint = async (caller: string): Promise<Credentials> => {
    const res = await send(`${server.url}${PATH}`, { headers: { 'X-Forwarded-For': caller } });
    expect(res.status).toBe(200);
    return (res.body as { data: Credentials }).data;
  };

  it('runs the documented configuration with nothing but paths and the secret changed', () => {
    expect(lab.turn.host).toBe(documentedSetting('listening-ip'));
    expect(lab.turn.relay).toBe(documentedSetting('relay-ip'));
    expect(configurationComplaints(lab.turn.log())).toEqual([]);
  });

  it.each([
    ['a peer on the internet', '192.0.2.1', () => ({ host: INTERNET_PEER, side: lab.internet })],
    ["the TURN host's other address", '192.0.2.2', () => ({ host: TURN_HOST_OTHER, side: lab.host })],
  ])('%s is refused (403) and receives nothing', async (_name, caller, peer) => {
    const { host, side } = peer();
    const { username, credential } = await mint(caller);
    const result = await uclient(lab.turn, username, credential, { host, port: PEER_PORT });
    expect(result.output).toContain('403 (Forbidden IP)');
    await sleep(200);
    expect(side.received(host, PEER_PORT)).toBe(0);
  });

  it('a UDP service on the relay address: reached without the firewall (the relay address is an allowed peer), nothing with it', async () => {
    const { username, credential } = await mint('192.0.2.3');
    await uclient(lab.turn, username, credential, { host: TURN_HOST, port: SERVICE_PORT }, () => lab.host.received(TURN_HOST, SERVICE_PORT) >= 10);
    const before = lab.host.received(TURN_HOST, SERVICE_PORT);
    expect(before, 'without the firewall the relayed datagrams reach the service').toBeGreaterThan(0);
    lab.loadFirewall();
    const again = await mint('192.0.2.5');
    const sent = await uclient(lab.turn, again.username, again.credential, { host: TURN_HOST, port: SERVICE_PORT }, () => lab.firewallCounted() > 0);
    // coturn relayed it (no 403), and the firewall's rule dropped it (coturn's send is refused, EPERM).
    expect(sent.output).not.toContain('403');
    expect(lab.firewallCounted()).toBeGreaterThan(0);
    await sleep(200);
    expect(lab.host.received(TURN_HOST, SERVICE_PORT)).toBe(before);
  });

  it("with the firewall, a loss test's relaying between two relayed addresses still passes every datagram", async () => {
    const { username, credential } = await mint('192.0.2.4');
    const result = await uclient(lab.turn, username, credential);
    expect(result.code, result.output).toBe(0);
    const sent = /tot_send_msgs=(\d+), tot_recv_msgs=(\d+)\s*$/m.exec(result.output);
    expect(Number(sent?.[1])).toBeGreaterThan(0);
    expect(sent?.[2]).toBe(sent?.[1]);
  });
});
