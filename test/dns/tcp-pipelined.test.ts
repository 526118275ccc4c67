// The pipelined TCP transport (tcp:// upstreams) against FAKE TCP peers (below), for what no real
// server does on demand: replies out of order, an idle close or a reset crossing a query, a
// resolver that keeps closing, a late reply. Many queries in flight against the real Knot are
// in test/dns/resolve-against-knot.test.ts. A resolver that drops our SYNs is a real network namespace whose
// replies go nowhere (a blackhole route), not a fake.
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import dnsPacket from 'dns-packet';
import { describe, expect, it } from 'vitest';
import { framed, tcpTransport } from '../../src/runtime/node/ports/dns-transport/tcp.js';
import { pipelinedTcpTransport } from '../../src/runtime/node/ports/dns-transport/tcp-pipelined.js';
import { canMakeNetns, createNetns } from '../support/netns.js';
import { requireCommands } from '../support/system.js';
import { Deadline } from '../../src/core/ports/dns-transport.js';

type Behaviour = (socket: Socket, query: Buffer, nth: number, state: { connections: number }) => void;

const replyTo = (query: Buffer) => {
  const decoded = dnsPacket.decode(query);
  return dnsPacket.encode({ type: 'response', id: decoded.id, flags: dnsPacket.RECURSION_AVAILABLE, questions: decoded.questions ?? [], answers: [] });
};

/** FAKE TCP resolver: splits the stream into queries and hands each to `behaviour`. */
async function startPeer(behaviour: Behaviour): Promise<{ server: Server; port: number; state: { connections: number; queries: number } }> {
  const state = { connections: 0, queries: 0 };
  const server = createServer((socket) => {
    state.connections += 1;
    let buffered = Buffer.alloc(0);
    socket.on('error', () => undefined);
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 2 && buffered.length >= buffered.readUInt16BE(0) + 2) {
        const query = buffered.subarray(2, buffered.readUInt16BE(0) + 2);
        buffered = buffered.subarray(query.length + 2);
        state.queries += 1;
        behaviour(socket, query, state.queries, state);
      }
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  return { server, port: typeof address === 'object' && address !== null ? address.port : 0, state };
}

const query = (id: number, name: string) => dnsPacket.encode({ type: 'query', id, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type: 'A', name, class: 'IN' }] });
const questionOf = (message: Uint8Array) => dnsPacket.decode(Buffer.from(message)).questions?.[0]?.name;
const transportTo = (port: number, host = '127.0.0.1', connectTimeoutMs = 2000) => pipelinedTcpTransport(host, port, tcpTransport(host, port), connectTimeoutMs);

describe('pipelined TCP', () => {
  it('sends queries made together on one connection and matches replies that come in reverse order', async () => {
    const held: { socket: Socket; query: Buffer }[] = [];
    const peer = await startPeer((socket, q) => {
      held.push({ socket, query: Buffer.from(q) });
      if (held.length === 6) for (const h of held.reverse()) h.socket.write(framed(replyTo(h.query)));
    });
    try {
      const transport = transportTo(peer.port);
      const names = Array.from({ length: 6 }, (_, i) => `q${String(i)}.example`);
      const replies = await Promise.all(names.map((name, i) => transport.exchange(query(100 + i, name), new Deadline(2000))));
      expect(replies.map(questionOf)).toEqual(names);
      expect(peer.state.connections).toBe(1);
    } finally {
      peer.server.close();
    }
  });

  // An idle close crossing a query reaches the client as a FIN, or as a reset (RST) when the
  // query was still unread on the resolver's side: ECONNRESET. Either way it is sent once more.
  it.each([
    ['an idle close (FIN)', (socket: Socket) => socket.destroy()],
    ['a reset (RST)', (socket: Socket) => socket.resetAndDestroy()],
  ])('sends a query again on a new connection when %s crosses it', async (_, close) => {
    const peer = await startPeer((socket, q, nth) => {
      if (nth === 1) close(socket);
      else socket.write(framed(replyTo(q)));
    });
    try {
      const reply = await transportTo(peer.port).exchange(query(7, 'again.example'), new Deadline(2000));
      expect(questionOf(reply)).toBe('again.example');
      expect(peer.state.connections).toBe(2);
    } finally {
      peer.server.close();
    }
  });

  it('fails as unavailable when the resolver closes on the retry as well', async () => {
    const peer = await startPeer((socket) => {
      socket.destroy();
    });
    try {
      await expect(transportTo(peer.port).exchange(query(8, 'closing.example'), new Deadline(2000))).rejects.toMatchObject({ kind: 'unavailable', reason: 'closed_early' });
      expect(peer.state.queries).toBe(2);
    } finally {
      peer.server.close();
    }
  });

  it('ends a query at its deadline, drops its late reply, and answers the next on the same connection', async () => {
    const peer = await startPeer((socket, q, nth) => {
      // The first reply comes after the first query's deadline, just before the second's reply.
      if (nth === 1) setTimeout(() => socket.write(framed(replyTo(q))), 150);
      else setTimeout(() => socket.write(framed(replyTo(q))), 100);
    });
    try {
      const transport = transportTo(peer.port);
      await expect(transport.exchange(query(9, 'slow.example'), new Deadline(50))).rejects.toMatchObject({ kind: 'timeout' });
      const reply = await transport.exchange(query(10, 'next.example'), new Deadline(2000));
      expect(questionOf(reply)).toBe('next.example');
      expect(peer.state.connections).toBe(1);
    } finally {
      peer.server.close();
    }
  });

  it('gives a query whose ID is already in flight a connection of its own', async () => {
    const peer = await startPeer((socket, q) => {
      setTimeout(() => socket.write(framed(replyTo(q))), 50);
    });
    try {
      const transport = transportTo(peer.port);
      const [a, b] = await Promise.all([transport.exchange(query(11, 'a.example'), new Deadline(2000)), transport.exchange(query(11, 'b.example'), new Deadline(2000))]);
      expect([questionOf(a), questionOf(b)]).toEqual(['a.example', 'b.example']);
      expect(peer.state.connections).toBe(2);
    } finally {
      peer.server.close();
    }
  });
});

const namespaces = canMakeNetns() && requireCommands('a resolver that drops SYNs, in a network namespace', ['ip'], 'iproute2');
if (!canMakeNetns()) {
  if (process.env.CI === 'true') throw new Error('pipelined TCP connect deadline: needs root for network namespaces; CI requires it');
  process.stderr.write('\n*** SKIPPED pipelined TCP connect deadline: needs root for network namespaces ***\n\n');
}

describe.skipIf(!namespaces)('pipelined TCP: a resolver that never answers the connect', () => {
  it('gives the connection up at the connect deadline and opens a new one for the next query', async () => {
    const netns = createNetns();
    // Whatever the namespace sends back (its SYN-ACK or RST) is dropped: our connect hangs, as it
    // does to a host that is gone or behind a dropping firewall.
    const blackhole = ['-n', netns.name, 'route', 'add', 'blackhole', `${netns.hostAddress}/32`];
    execFileSync('ip', blackhole);
    try {
      const transport = transportTo(53, netns.nsAddress, 300);
      const started = Date.now();
      // The query's own deadline is far later: the rejection is the connect deadline's.
      await expect(transport.exchange(query(12, 'hung.example'), new Deadline(10_000))).rejects.toMatchObject({ kind: 'unavailable', reason: 'connect_timeout' });
      expect(Date.now() - started).toBeLessThan(5_000);
      // The namespace answers again (nothing listens there: a reset). A new connection is
      // opened and refused at once; the given-up one would have kept the query until its deadline.
      execFileSync('ip', ['-n', netns.name, 'route', 'del', 'blackhole', `${netns.hostAddress}/32`]);
      await expect(transport.exchange(query(13, 'back.example'), new Deadline(10_000))).rejects.toMatchObject({ kind: 'unavailable', reason: 'ECONNREFUSED' });
    } finally {
      netns.destroy();
    }
  });
});
