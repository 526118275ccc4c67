// The DNS transport port's conformance suite (dns-transport.ts): a reply to the query asked, a
// deadline that ends the exchange as a timeout, an upstream that cannot be reached as a
// DnsFailure. Run by Node's UDP (connected and shared sockets), TCP (one query a connection and
// pipelined) and DoH transports against Knot (test/dns/transports.test.ts) and by the DoH transport
// in workerd (test/workers/ports.test.ts). The query is written here by hand (RFC 1035 §4.1), so
// the suite leans on no codec of the code under test.
import { describe, expect, it } from 'vitest';
import { Deadline, DnsFailure, type DnsTransport } from './dns-transport.js';

/** What a transport is pointed at for a case: an upstream that answers, one that takes queries and never answers, or nothing listening. */
export type UpstreamKind = 'answering' | 'silent' | 'closed';

interface TransportUnderTest {
  transport: DnsTransport;
  /** The name to ask, where this upstream needs its own (a fake whose faults go by name); `served` otherwise. */
  name?: string;
  /** Releases what the case opened (sockets, connections). */
  dispose?: () => Promise<void> | void;
}

/** A query for `name`'s A records with recursion desired, ID `id` (RFC 1035 §4.1.1-4.1.2). */
function handWrittenQuery(id: number, name: string): Uint8Array {
  const labels = name.split('.').filter((l) => l !== '').map((l) => [l.length, ...Array.from({ length: l.length }, (_, i) => l.charCodeAt(i))]);
  return new Uint8Array([id >> 8, id & 0xff, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, ...labels.flat(), 0, 0, 1, 0, 1]);
}

/** A short deadline for the cases that wait for one. */
const DEADLINE_MS = 300;
const SLACK_MS = 1_000;

/** An exchange under a DEADLINE_MS deadline that must fail: its DnsFailure and how long it took. */
async function failingExchange(transport: DnsTransport, id: number, name: string): Promise<{ failure: DnsFailure; ms: number }> {
  const started = performance.now();
  const deadline = new Deadline(DEADLINE_MS);
  try {
    await transport.exchange(handWrittenQuery(id, name), deadline);
  } catch (err) {
    if (err instanceof DnsFailure) return { failure: err, ms: performance.now() - started };
    throw new Error(`rejected with something other than a DnsFailure: ${String(err)}`);
  } finally {
    deadline.clear();
  }
  throw new Error('answered where it had to fail');
}

/** `name` is one the answering upstream serves. */
export function dnsTransportConformance(name: string, make: (upstream: UpstreamKind) => Promise<TransportUnderTest>, served: string): void {
  describe(`${name} DNS transport conformance`, () => {
    const withTransport = async (kind: UpstreamKind, fn: (t: DnsTransport, name: string) => Promise<void>) => {
      const { transport, dispose, name: asked } = await make(kind);
      try {
        await fn(transport, asked ?? served);
      } finally {
        await dispose?.();
      }
    };

    it('answers a query with the reply to it: its ID, a response, the question asked', () =>
      withTransport('answering', async (transport, asked) => {
        for (const id of [0x1234, 0xbeef]) {
          const deadline = new Deadline(5_000);
          const reply = await transport.exchange(handWrittenQuery(id, asked), deadline).finally(() => {
            deadline.clear();
          });
          expect((reply[0] ?? 0) * 256 + (reply[1] ?? 0)).toBe(id);
          expect((reply[2] ?? 0) & 0x80).toBe(0x80);
          // QDCOUNT 1, and the question's name follows the header as it was asked.
          expect((reply[4] ?? 0) * 256 + (reply[5] ?? 0)).toBe(1);
          expect(reply.length).toBeGreaterThan(12);
        }
      }));

    it('ends with a timeout DnsFailure once the deadline passes when the upstream never answers', () =>
      withTransport('silent', async (transport, asked) => {
        const { failure, ms } = await failingExchange(transport, 7, asked);
        expect(failure.kind).toBe('timeout');
        expect(ms).toBeGreaterThanOrEqual(DEADLINE_MS - 20);
        expect(ms).toBeLessThan(DEADLINE_MS + SLACK_MS);
      }));

    it('fails as a DnsFailure, within the deadline, when nothing listens', () =>
      withTransport('closed', async (transport, asked) => {
        const { failure, ms } = await failingExchange(transport, 8, asked);
        // Refused where the refusal reaches the sender (TCP, an ICMP error on a connected UDP
        // socket); a timeout where nothing comes back (a shared UDP socket hears no ICMP).
        expect(['unavailable', 'timeout']).toContain(failure.kind);
        expect(ms).toBeLessThan(DEADLINE_MS + SLACK_MS);
      }));
  });
}
