// Every Node DNS transport held to the port's conformance suite (src/core/ports/dns-transport.conformance.ts):
// connected UDP, the shared UDP sockets, TCP a query a connection, pipelined TCP, and DoH, each
// against Knot on loopback (DoH through a TLS relay in front of it), a peer that takes queries and
// never answers (FAKE: no real server is silent on demand), and a port nothing listens on.
import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createTcpServer, type Server, type Socket } from 'node:net';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe } from 'vitest';
import { dnsTransportConformance, type UpstreamKind } from '../../src/core/ports/dns-transport.conformance.js';
import type { DnsTransport } from '../../src/core/ports/dns-transport.js';
import { dohTransport } from '../../src/engines/dns/doh.js';
import { pipelinedTcpTransport } from '../../src/runtime/node/ports/dns-transport/tcp-pipelined.js';
import { tcpTransport } from '../../src/runtime/node/ports/dns-transport/tcp.js';
import { sharedUdpTransport } from '../../src/runtime/node/ports/dns-transport/udp-shared.js';
import { udpTransport } from '../../src/runtime/node/ports/dns-transport/udp.js';
import { startDohRelay, type DohRelay } from '../support/doh-relay.js';
import { startKnot, type Knot } from '../support/knot.js';
import { requireCommands } from '../support/system.js';
import { freePort } from '../support/wait.js';

const haveKnot = requireCommands('DNS transport conformance', ['knotd', 'knotc', 'openssl'], 'knot openssl');

/** FAKE silent peers: a UDP socket and a TCP listener (plain and HTTP) that take queries and never answer. */
async function silentPeers() {
  const udp = createSocket('udp4');
  udp.bind(0, '127.0.0.1');
  await once(udp, 'listening');
  const held = new Set<Socket>();
  const tcp: Server = createTcpServer((socket) => held.add(socket)).listen(0, '127.0.0.1');
  await once(tcp, 'listening');
  const http = createHttpServer(() => undefined).listen(0, '127.0.0.1');
  await once(http, 'listening');
  const portOf = (s: { address(): unknown }) => (s.address() as { port: number }).port;
  return {
    udpPort: udp.address().port,
    tcpPort: portOf(tcp),
    httpUrl: `http://127.0.0.1:${String(portOf(http))}/dns-query`,
    close: () => {
      udp.close();
      for (const s of held) s.destroy();
      tcp.close();
      http.closeAllConnections();
      http.close();
    },
  };
}

describe.skipIf(!haveKnot)('the Node DNS transports', () => {
  let knot: Knot;
  let doh: DohRelay;
  let silent: Awaited<ReturnType<typeof silentPeers>>;
  let closedPort: number;
  let trusting: Agent;
  beforeAll(async () => {
    knot = await startKnot();
    doh = await startDohRelay(knot.port);
    silent = await silentPeers();
    closedPort = await freePort();
    trusting = new Agent({ connect: { ca: readFileSync(doh.caFile) } });
  });
  afterAll(async () => {
    silent.close();
    await trusting.close();
    await doh.close();
    await knot.close();
  });

  /** Each transport's port on each kind of upstream (the answering one is Knot). */
  const portOf = (kind: UpstreamKind, silentPort: () => number) => (kind === 'answering' ? knot.port : kind === 'silent' ? silentPort() : closedPort);
  const made = (build: (kind: UpstreamKind) => DnsTransport) => (kind: UpstreamKind) => Promise.resolve({ transport: build(kind) });

  dnsTransportConformance('UDP, a connected socket a query', made((kind) => udpTransport('127.0.0.1', portOf(kind, () => silent.udpPort))), 'example.test');
  dnsTransportConformance(
    'UDP, the shared sockets',
    made((kind) => sharedUdpTransport('127.0.0.1', portOf(kind, () => silent.udpPort), udpTransport('127.0.0.1', portOf(kind, () => silent.udpPort)))),
    'example.test',
  );
  dnsTransportConformance('TCP, a connection a query', made((kind) => tcpTransport('127.0.0.1', portOf(kind, () => silent.tcpPort))), 'example.test');
  dnsTransportConformance('TCP, pipelined', (kind) => {
    const port = portOf(kind, () => silent.tcpPort);
    const transport = pipelinedTcpTransport('127.0.0.1', port, tcpTransport('127.0.0.1', port), 1_000);
    return Promise.resolve({ transport });
  }, 'example.test');
  dnsTransportConformance(
    'DNS over HTTPS',
    made((kind) => {
      const url = kind === 'answering' ? doh.url : kind === 'silent' ? silent.httpUrl : `http://127.0.0.1:${String(closedPort)}/dns-query`;
      return dohTransport(url, ((input, init) => undiciFetch(input as string, { ...(init as object), dispatcher: trusting })) as typeof fetch);
    }),
    'example.test',
  );
});
