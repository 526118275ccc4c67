// The shared UDP sockets (NETDIAG_DNS_UDP_SOCKETS=shared, the default for a loopback upstream)
// against FAKE peers (recording, late, reversing; below), since no real server answers late or
// out of order on demand: what the queries carry, a late reply kept from a newer query with the
// same ID, replies matched by ID, recovery after an unreachable upstream. Many queries in flight
// against the real Knot are in test/dns/resolve-against-knot.test.ts.
import { createSocket, type Socket } from 'node:dgram';
import { once } from 'node:events';
import dnsPacket from 'dns-packet';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/runtime/node/adapter/config.js';
import { nodeResolver } from '../../src/runtime/node/ports/dns-transport/transports.js';
import { udpTransport } from '../../src/runtime/node/ports/dns-transport/udp.js';
import { sharedUdpTransport } from '../../src/runtime/node/ports/dns-transport/udp-shared.js';
import { SYSTEM_CLOCK as systemClock } from '../../src/core/ports/clock.js';
import { Deadline } from '../../src/core/ports/dns-transport.js';

interface Seen {
  port: number;
  id: number;
  name: string;
}

/** FAKE peer: records each query's source port, ID and name, and answers it after `delayMs` with its own question. */
async function startPeer(delayMs = 0, port = 0): Promise<{ socket: Socket; port: number; seen: Seen[] }> {
  const socket = createSocket('udp4');
  const seen: Seen[] = [];
  socket.on('message', (message, rinfo) => {
    const query = dnsPacket.decode(message);
    const question = query.questions?.[0] ?? { type: 'A' as const, name: 'x' };
    seen.push({ port: rinfo.port, id: query.id ?? -1, name: question.name });
    const reply = dnsPacket.encode({ type: 'response', id: query.id, flags: dnsPacket.RECURSION_AVAILABLE, questions: [question], answers: [] });
    setTimeout(() => {
      socket.send(reply, rinfo.port, rinfo.address);
    }, delayMs);
  });
  socket.bind(port, '127.0.0.1');
  await once(socket, 'listening');
  return { socket, port: socket.address().port, seen };
}

const queryWithId = (id: number, name: string) => dnsPacket.encode({ type: 'query', id, flags: dnsPacket.RECURSION_DESIRED, questions: [{ type: 'A', name, class: 'IN' }] });
const questionOf = (message: Uint8Array) => dnsPacket.decode(Buffer.from(message)).questions?.[0]?.name;

describe('shared UDP sockets', () => {
  it('is the default for a loopback upstream only, and can be chosen either way', () => {
    const sockets = (env: Record<string, string>) => {
      const upstream = loadConfig(env).dnsUpstream;
      return upstream.protocol === 'udp' ? upstream.sockets : upstream.protocol;
    };
    expect(sockets({ NETDIAG_DNS_UPSTREAM: 'udp://127.0.0.1:53' })).toBe('shared');
    expect(sockets({ NETDIAG_DNS_UPSTREAM: 'udp://[::1]:53' })).toBe('shared');
    expect(sockets({ NETDIAG_DNS_UPSTREAM: 'udp://192.0.2.53' })).toBe('per-query');
    expect(sockets({ NETDIAG_DNS_UPSTREAM: 'udp://192.0.2.53', NETDIAG_DNS_UDP_SOCKETS: 'shared' })).toBe('shared');
    expect(sockets({ NETDIAG_DNS_UPSTREAM: 'udp://127.0.0.1', NETDIAG_DNS_UDP_SOCKETS: 'per-query' })).toBe('per-query');
    expect(() => loadConfig({ NETDIAG_DNS_UPSTREAM: 'udp://127.0.0.1', NETDIAG_DNS_UDP_SOCKETS: 'pooled' })).toThrow(expect.objectContaining({ variable: 'NETDIAG_DNS_UDP_SOCKETS', message: 'must be per-query or shared, got "pooled"' }));
    expect(() => loadConfig({ NETDIAG_DNS_UPSTREAM: 'tcp://127.0.0.1', NETDIAG_DNS_UDP_SOCKETS: 'shared' })).toThrow(expect.objectContaining({ variable: 'NETDIAG_DNS_UDP_SOCKETS', message: 'applies only to a udp:// NETDIAG_DNS_UPSTREAM' }));
  });

  it('sends every query from one of a few long-lived ports, each with a random ID', async () => {
    const peer = await startPeer();
    try {
      const resolver = nodeResolver(loadConfig({ NETDIAG_DNS_UPSTREAM: `udp://127.0.0.1:${String(peer.port)}` }), systemClock);
      for (let i = 0; i < 40; i++) await resolver.resolveUncached(`q${String(i)}.example`, 'A', 1000);
      expect(peer.seen).toHaveLength(40);
      expect(new Set(peer.seen.map((s) => s.port)).size).toBeLessThanOrEqual(4);
      // Random 16-bit values may meet by chance; a counter or a fixed ID would not spread like this.
      expect(new Set(peer.seen.map((s) => s.id)).size).toBeGreaterThanOrEqual(38);
    } finally {
      peer.socket.close();
    }
  });

  it('never hands a late reply to a newer query with the same ID', async () => {
    // The peer answers 150 ms after each query. Four queries with ID 7 end at their 50 ms
    // deadlines, one per socket; a fifth with ID 7, sent while their replies are still to come,
    // must get its own reply, not one of theirs.
    const peer = await startPeer(150);
    try {
      const transport = sharedUdpTransport('127.0.0.1', peer.port, udpTransport('127.0.0.1', peer.port));
      const abandoned = ['a1', 'a2', 'a3', 'a4'].map((name) => transport.exchange(queryWithId(7, `${name}.example`), new Deadline(50)).catch((err: unknown) => err));
      for (const outcome of await Promise.all(abandoned)) expect(outcome).toMatchObject({ kind: 'timeout' });
      const reply = await transport.exchange(queryWithId(7, 'fresh.example'), new Deadline(2000));
      expect(questionOf(reply)).toBe('fresh.example');
      // It went out on a socket of its own: every shared one has ID 7 retired.
      const ports = peer.seen.map((s) => s.port);
      expect(ports.slice(0, 4)).not.toContain(ports[4]);
    } finally {
      peer.socket.close();
    }
  });

  it('takes each reply only for the query in flight with its ID', async () => {
    // FAKE peer that holds the first eight queries and answers them in reverse order: with four
    // shared sockets, each socket has two queries in flight and gets the later one's reply first.
    const peer = createSocket('udp4');
    const held: { reply: Buffer; port: number }[] = [];
    peer.on('message', (message, rinfo) => {
      const query = dnsPacket.decode(message);
      held.push({ port: rinfo.port, reply: dnsPacket.encode({ type: 'response', id: query.id, flags: dnsPacket.RECURSION_AVAILABLE, questions: query.questions ?? [], answers: [] }) });
      if (held.length === 8) for (const { reply, port } of held.reverse()) peer.send(reply, port, '127.0.0.1');
    });
    peer.bind(0, '127.0.0.1');
    await once(peer, 'listening');
    try {
      const port = peer.address().port;
      const transport = sharedUdpTransport('127.0.0.1', port, udpTransport('127.0.0.1', port));
      const names = Array.from({ length: 8 }, (_, i) => `q${String(i)}.example`);
      const replies = await Promise.all(names.map((name, i) => transport.exchange(queryWithId(1000 + i, name), new Deadline(2000))));
      expect(replies.map(questionOf)).toEqual(names);
      expect(new Set(held.map((h) => h.port)).size).toBe(4);
    } finally {
      peer.close();
    }
  });

  it('fails as unavailable while nothing listens, and answers once the upstream is back', async () => {
    // A port that was free a moment ago: the first query meets an ICMP port unreachable.
    const probe = await startPeer();
    const port = probe.port;
    probe.socket.close();
    const transport = sharedUdpTransport('127.0.0.1', port, udpTransport('127.0.0.1', port));
    await expect(transport.exchange(queryWithId(2001, 'down.example'), new Deadline(1000))).rejects.toMatchObject({ kind: 'unavailable' });
    const peer = await startPeer(0, port);
    try {
      const reply = await transport.exchange(queryWithId(2002, 'up.example'), new Deadline(1000));
      expect(questionOf(reply)).toBe('up.example');
    } finally {
      peer.socket.close();
    }
  });
});
