// FAKE upstreams for faults no real DNS server produces on demand: silence, garbage, a
// mismatched question, a spoofed ID, a truncated UDP reply, a recursive resolver that answers
// everything but the names of one dead zone (whose servers never answer). Each listens on loopback UDP (and
// TCP where the fault needs it) and builds its replies with dns-packet.
import { createSocket, type Socket } from 'node:dgram';
import { once } from 'node:events';
import { createServer, type Server } from 'node:net';
import dnsPacket from 'dns-packet';

export type Fault = 'silent' | 'garbage' | 'question-mismatch' | 'wrong-id-then-right' | 'truncated-then-tcp' | 'dead-zone';

/**
 * `dead-zone`: the names a recursive resolver cannot get an answer for in time, because their
 * zone's servers never answer (anyone can delegate a zone so): under `dead.example`, and every
 * reverse name (a caller whose reverse zone is dead). Every other question is answered.
 */
export const isDeadName = (name: string): boolean => /(^|\.)dead\.example$|\.(in-addr|ip6)\.arpa$/i.test(name);

export interface FakeDns {
  port: number;
  /** UDP queries received so far. */
  queries(): number;
  close(): Promise<void>;
}

function answerTo(query: dnsPacket.DecodedPacket, overrides: Partial<dnsPacket.Packet> = {}): Buffer {
  const question = query.questions?.[0] ?? { name: 'x', type: 'A' as const };
  return dnsPacket.encode({
    type: 'response',
    id: query.id,
    flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE,
    questions: [question],
    answers: [{ type: 'A', name: question.name, ttl: 60, data: '192.0.2.99' }],
    ...overrides,
  });
}

function reply(fault: Fault, query: dnsPacket.DecodedPacket, send: (b: Buffer) => void): void {
  switch (fault) {
    case 'silent':
      return;
    case 'garbage':
      send(Buffer.from([(query.id ?? 0) >> 8, (query.id ?? 0) & 0xff, 0x81, 0x80, 0xff, 0xff, 0x00]));
      return;
    case 'question-mismatch':
      send(answerTo(query, { questions: [{ type: 'A', name: 'elsewhere.example' }] }));
      return;
    case 'wrong-id-then-right':
      send(answerTo(query, { id: ((query.id ?? 0) + 1) & 0xffff, answers: [{ type: 'A', name: 'spoof', ttl: 60, data: '203.0.113.66' }] }));
      setTimeout(() => {
        send(answerTo(query));
      }, 50);
      return;
    case 'truncated-then-tcp':
      send(answerTo(query, { flags: dnsPacket.TRUNCATED_RESPONSE | dnsPacket.RECURSION_DESIRED, answers: [] }));
      return;
    case 'dead-zone':
      if (!isDeadName(query.questions?.[0]?.name ?? '')) send(answerTo(query));
      return;
  }
}

/**
 * The UDP port is the system's choice and the TCP side takes the same number, which another
 * socket on the machine may hold already (suites run in parallel): then both start again.
 */
export async function startFakeDns(fault: Fault): Promise<FakeDns> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startFakeDnsOnce(fault);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE' || attempt === 20) throw err;
    }
  }
}

async function startFakeDnsOnce(fault: Fault): Promise<FakeDns> {
  const udp: Socket = createSocket('udp4');
  let queries = 0;
  udp.on('message', (message, rinfo) => {
    queries += 1;
    reply(fault, dnsPacket.decode(message), (b) => { udp.send(b, rinfo.port, rinfo.address); });
  });
  udp.bind(0, '127.0.0.1');
  await once(udp, 'listening');
  const port = udp.address().port;

  // The TCP side answers in full: where a truncated UDP reply sends the client.
  const tcp: Server = createServer((socket) => {
    let buffered = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      if (buffered.length < 2 || buffered.length < buffered.readUInt16BE(0) + 2) return;
      const query = dnsPacket.decode(buffered.subarray(2, buffered.readUInt16BE(0) + 2));
      const full = answerTo(query, { answers: [{ type: 'A', name: query.questions?.[0]?.name ?? '', ttl: 60, data: '192.0.2.77' }] });
      const framed = Buffer.alloc(full.length + 2);
      framed.writeUInt16BE(full.length, 0);
      full.copy(framed, 2);
      socket.end(framed);
    });
    socket.on('error', () => undefined);
  });
  try {
    tcp.listen(port, '127.0.0.1');
    await once(tcp, 'listening');
  } catch (err) {
    udp.close();
    throw err;
  }

  return {
    port,
    queries: () => queries,
    close: async () => {
      udp.close();
      tcp.close();
      await once(tcp, 'close');
    },
  };
}
