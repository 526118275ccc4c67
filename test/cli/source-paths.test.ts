// `--source ADDRESS` on the two paths that open connections of their own, beside the API client:
// `netdiag rpm` (its configuration fetch, its HTTP/2 load connections and each foreign probe's new
// connection; the self probes ride the load connections) against the real server over TLS, and the
// speed test's packet-loss step (its UDP socket to the TURN server) against Debian's coturn. A relay
// in front of each notes the client address the server's side sees. The whole of 127/8 is this
// host's (the loopback route), so 127.0.0.9 and 127.0.0.10 are real sources.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRpmReport } from '../../src/common/speedtest/report-parse.js';
import type { CliReport as Report } from '../support/cli-report.js';
import { startCoturn, type Coturn } from '../support/coturn.js';
import { startDatagramRelay, type DatagramRelay } from '../support/datagram-relay.js';
import { selfSignedCertificate } from '../support/doh-relay.js';
import { runCli, serveCli, type Serving } from '../support/process.js';
import { LOOPBACK_TRANSFERS, startTestServer, type TestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';
import { startConnectionRelay, type ConnectionRelay } from './connection-relay.js';

const withOpenssl = requireCommands('netdiag rpm --source', ['openssl'], 'openssl');
const withCoturn = requireCommands('speedtest --source through TURN', ['turnserver'], 'coturn');

/** STUN message types (RFC 8656 §17): the TURN path's request and its datagrams out. */
const ALLOCATE_REQUEST = 0x0003;
const SEND_INDICATION = 0x0016;

describe.skipIf(!withOpenssl)('netdiag rpm --source', () => {
  let server: Serving;
  let relay: ConnectionRelay;
  let trust: Record<string, string>;
  beforeAll(async () => {
    const cert = selfSignedCertificate();
    trust = { NODE_EXTRA_CA_CERTS: cert.certFile };
    // Its own process: the load is the machine's to carry, and the relay's event loop is this one's.
    server = await serveCli({ NETDIAG_TLS_CERT: cert.certFile, NETDIAG_TLS_KEY: cert.keyFile, ...LOOPBACK_TRANSFERS });
    relay = await startConnectionRelay('127.0.0.1', { host: '127.0.0.1', port: server.port });
  }, 30_000);
  afterAll(async () => {
    await relay.close();
    server.child.kill('SIGTERM');
    await server.exited;
  });

  it('every connection the server sees comes from 127.0.0.9: the configuration, each load connection and each new-connection probe', async () => {
    const run = await runCli(['rpm', '--url', `https://127.0.0.1:${String(relay.port)}`, '--source', '127.0.0.9', '--json'], trust, 90_000);
    expect(run.code, run.stderr).toBe(0);
    const read = readRpmReport(JSON.parse(run.stdout));
    if (!read.ok) throw new Error(read.reason);
    const { download, upload } = read.report;
    // TLS hides the requests from the relay: the report's own counts say how many connections the
    // run opened at least (the configuration's one, the load's, one per foreign probe counted).
    const opened = 1 + download.connections + upload.connections + download.probes.foreign + upload.probes.foreign;
    expect(download.probes.foreign + upload.probes.foreign).toBeGreaterThan(0);
    expect(relay.connections.length).toBeGreaterThanOrEqual(opened);
    expect(relay.connections.length).toBeGreaterThan(5);
    expect(new Set(relay.connections.map((c) => c.address))).toEqual(new Set(['127.0.0.9']));
  }, 90_000);
});

describe.skipIf(!withCoturn)('speedtest --source: the packet-loss step through TURN', () => {
  const secret = randomBytes(32).toString('base64');
  let turn: Coturn;
  let relay: DatagramRelay;
  let server: TestServer;
  beforeAll(async () => {
    turn = await startCoturn(secret);
    // The deployment names the relay as its TURN server: the client's datagrams pass it on the way to coturn.
    relay = await startDatagramRelay('127.0.0.1', { host: turn.host, port: turn.port });
    server = await startTestServer({ NETDIAG_TURN_URL: `turn:127.0.0.1:${String(relay.port)}`, NETDIAG_TURN_SECRET: secret, ...LOOPBACK_TRANSFERS });
  }, 30_000);
  afterAll(async () => {
    await server.close();
    await relay.close();
    await turn.close();
  });

  it('--source 127.0.0.10: the allocation and every datagram reach the TURN server from that address, and the loss is measured', async () => {
    const run = await runCli(['speedtest', '--mode', 'light', '--no-analytics', '--json', '--source', '127.0.0.10', '--url', server.url], {}, 90_000);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(run.stdout) as Report;
    // Measured through the relay, not "not measured": the allocation held and datagrams came back.
    expect(report.packet_loss).toMatchObject({ server: `turn:127.0.0.1:${String(relay.port)}`, sent: 1000 });
    expect(report.packet_loss?.received).toBeGreaterThan(0);
    expect(report.packet_loss_percent).not.toBeNull();
    const types = relay.datagrams.map((d) => d.type);
    expect(types).toContain(ALLOCATE_REQUEST);
    expect(types.filter((t) => t === SEND_INDICATION)).toHaveLength(1000);
    expect(new Set(relay.datagrams.map((d) => d.address))).toEqual(new Set(['127.0.0.10']));
  }, 90_000);
});
