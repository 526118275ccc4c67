// Property-based tests (fast-check) of everything that parses what a peer or a caller sends:
// DNS replies (random, and mutated from real Knot replies), PROXY protocol headers, forwarding
// headers, event bodies and query strings. Each property states what must hold for every
// input: an answer or a 502, never a crash; a client never chooses its own address; never a 500.
import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/app/app.js';
import { DnsCache } from '../src/engines/dns/cache.js';
import { createResolver } from '../src/engines/dns/resolver.js';
import type { DnsType } from '../src/common/dns-types.js';
import { decodeResponse, encodeQuery, messageId } from '../src/engines/dns/wire.js';
import { parseAddress } from '../src/core/net/address.js';
import { resolveCaller, type TrustedHeader } from '../src/core/net/caller-address.js';
import { forwardedChain, xForwardedForChain } from '../src/core/net/forwarded.js';
import { parseTrustList } from '../src/core/net/trust.js';
import { parseProxyHeader } from '../src/runtime/node/adapter/proxy-protocol.js';
import { startKnot, type Knot } from './support/knot.js';
import { loopback, testServices } from './support/services.js';
import { requireCommands } from './support/system.js';
import { DnsFailure } from '../src/core/ports/dns-transport.js';
import { ManualClock } from '../src/core/ports/clock.conformance.js';

/** A DNS decode either answers or fails as a DnsFailure that the route maps to 502. */
function decodesOr502(message: Uint8Array, name: string, type: DnsType): void {
  try {
    decodeResponse(message, name, type);
  } catch (err) {
    expect(err).toBeInstanceOf(DnsFailure);
    expect(['invalid', 'too_large']).toContain((err as DnsFailure).kind);
  }
}

type Edit = { op: 'set'; at: number; byte: number } | { op: 'cut'; at: number } | { op: 'insert'; at: number; bytes: Uint8Array };

/** Byte edits: overwrite, cut, or insert, at positions taken modulo the message's length. */
const edits: fc.Arbitrary<Edit[]> = fc.array(
  fc.oneof<[fc.Arbitrary<Edit>, fc.Arbitrary<Edit>, fc.Arbitrary<Edit>]>(
    fc.record({ op: fc.constant('set' as const), at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }),
    fc.record({ op: fc.constant('cut' as const), at: fc.nat() }),
    fc.record({ op: fc.constant('insert' as const), at: fc.nat(), bytes: fc.uint8Array({ maxLength: 8 }) }),
  ),
  { minLength: 1, maxLength: 6 },
);

function mutate(message: Uint8Array, changes: Edit[]): Uint8Array {
  let bytes = Uint8Array.from(message);
  for (const change of changes) {
    const at = bytes.length === 0 ? 0 : change.at % bytes.length;
    if (change.op === 'set') bytes[at] = change.byte;
    else if (change.op === 'cut') bytes = bytes.subarray(0, at);
    else bytes = Uint8Array.from([...bytes.subarray(0, at), ...change.bytes, ...bytes.subarray(at)]);
  }
  return bytes;
}

describe('DNS replies', () => {
  it('random bytes decode to an answer or a 502-class failure, never a crash', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 600 }), fc.constantFrom<DnsType>('A', 'AAAA', 'MX', 'TXT', 'PTR', 'CNAME', 'NS'), (bytes, type) => {
        decodesOr502(bytes, 'a.example', type);
      }),
      { numRuns: 2_000 },
    );
  });

  const haveKnot = requireCommands('DNS reply properties (real Knot replies)', ['knotd', 'knotc'], 'knot');
  describe.skipIf(!haveKnot)('mutated real Knot replies', () => {
    let knot: Knot;
    const replies: { message: Uint8Array; name: string; type: DnsType }[] = [];
    beforeAll(async () => {
      knot = await startKnot();
      const socket = createSocket('udp4');
      for (const [name, type] of [
        ['www.example.test', 'A'], ['example.test', 'MX'], ['alias.example.test', 'A'], ['nope.example.test', 'A'],
        ['example.test', 'TXT'], ['10.2.0.192.in-addr.arpa', 'PTR'], ['example.test', 'NS'], ['www.example.test', 'AAAA'], ['fifty.example.test', 'A'],
      ] as [string, DnsType][]) {
        socket.send(encodeQuery(name, type), knot.port, '127.0.0.1');
        const [message] = (await once(socket, 'message')) as [Buffer];
        replies.push({ message, name, type });
      }
      socket.close();
    });
    afterAll(() => knot.close());

    it('every reply Knot sent decodes as it is', () => {
      for (const { message, name, type } of replies) expect(() => decodeResponse(message, name, type)).not.toThrow();
    });

    it('any edit to a real reply decodes to an answer or a 502-class failure', () => {
      fc.assert(
        fc.property(fc.nat(), edits, (pick, changes) => {
          const { message, name, type } = replies[pick % replies.length] ?? { message: new Uint8Array(), name: 'x', type: 'A' as const };
          decodesOr502(mutate(message, changes), name, type);
        }),
        { numRuns: 3_000 },
      );
    });

    it('through the route, an edited reply with the right ID answers 200 or 502, never anything else', async () => {
      await fc.assert(
        fc.asyncProperty(fc.nat(), edits, async (pick, changes) => {
          const { message, name, type } = replies[pick % replies.length] ?? { message: new Uint8Array(), name: 'x', type: 'A' as const };
          const edited = mutate(message, changes);
          const clock = new ManualClock();
          const dns = createResolver({
            transport: {
              exchange: (query) => {
                // The ID is the query's (what a spoofer cannot know is tested elsewhere).
                const withId = Uint8Array.from(edited.length >= 2 ? edited : [0, 0]);
                withId[0] = messageId(query) >> 8;
                withId[1] = messageId(query) & 0xff;
                return Promise.resolve(withId);
              },
            },
            timeoutMs: 1_000,
            cache: new DnsCache(10, clock),
            clock,
          });
          // 192.0.2.10 is documentation space, special-use: the PTR is asked once the operator allows it.
          const app = createApp(testServices({ dns, specialUsePtr: true }));
          const query = type === 'PTR' ? '192.0.2.10' : name;
          const res = await app.fetch(new Request(`http://api.test/v1/dns/resolve?name=${query}&type=${type}`), loopback);
          expect([200, 502]).toContain(res.status);
          if (res.status !== 200) return;
          // What is answered holds real data: no address made of bytes that were never sent.
          const { data } = (await res.json()) as { data: { answers: { type: string; address?: string }[] } };
          for (const answer of data.answers) {
            if (answer.type === 'A') expect(answer.address).toMatch(/^\d{1,3}(\.\d{1,3}){3}$/);
            if (answer.type === 'AAAA') expect(answer.address).toMatch(/^[0-9a-f:.]+$/i);
          }
        }),
        { numRuns: 300 },
      );
    });
  });
});

describe('PROXY protocol headers', () => {
  const v1 = fc.tuple(fc.ipV4(), fc.ipV4(), fc.nat({ max: 65535 }), fc.nat({ max: 65535 })).map(([s, d, sp, dp]) => Buffer.from(`PROXY TCP4 ${s} ${d} ${String(sp)} ${String(dp)}\r\n`));
  const v2 = fc.tuple(fc.ipV4(), fc.uint8Array({ maxLength: 40 })).map(([source, tlvs]) => {
    const addresses = Buffer.from([...source.split('.').map(Number), 127, 0, 0, 1, 0x9c, 0x40, 0, 80]);
    const length = addresses.length + tlvs.length;
    return Buffer.concat([
      Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a, 0x21, 0x11, length >> 8, length & 0xff]),
      addresses,
      tlvs,
    ]);
  });

  const checkParsed = (data: Buffer) => {
    const parsed = parseProxyHeader(data);
    expect(['incomplete', 'invalid', 'ok']).toContain(parsed.status);
    if (parsed.status === 'ok') {
      expect(parsed.length).toBeLessThanOrEqual(data.length);
      const source = parsed.facts?.sourceAddress;
      if (source !== undefined) expect(parseAddress(source)).toBeDefined();
    }
  };

  it('well-formed v1 and v2 headers name their source', () => {
    fc.assert(
      fc.property(fc.oneof(v1, v2), (header) => {
        const parsed = parseProxyHeader(header);
        expect(parsed.status).toBe('ok');
      }),
    );
  });

  it('random bytes, and any edit of a valid header, parse to ok, incomplete or invalid, never a throw', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => { checkParsed(Buffer.from(bytes)); }), { numRuns: 2_000 });
    fc.assert(fc.property(fc.oneof(v1, v2), edits, (header, changes) => { checkParsed(Buffer.from(mutate(header, changes))); }), { numRuns: 3_000 });
  });
});

describe('forwarding headers', () => {
  const trust = parseTrustList('loopback, 10.0.0.0/8');
  const publicV4 = fc.ipV4().filter((a) => !a.startsWith('10.') && !a.startsWith('127.'));
  const text = fc.oneof(fc.string(), fc.string({ unit: fc.constantFrom(',', ';', '"', '=', '[', ']', ':', ' ', 'for', '1', '.', '\\', 'unknown') }));
  const resolveWith = (header: TrustedHeader, value: string, peer = '127.0.0.1') => resolveCaller(peer, { header: (name) => (name === header ? value : undefined) }, trust, header);

  it('any header text parses without throwing', () => {
    fc.assert(
      fc.property(text, (value) => {
        forwardedChain(value);
        xForwardedForChain(value);
        for (const header of ['x-forwarded-for', 'forwarded', 'x-real-ip'] as const) resolveWith(header, value);
      }),
      { numRuns: 2_000 },
    );
  });

  it('X-Forwarded-For: whatever the client wrote, the address the trusted proxy appended wins', () => {
    fc.assert(
      fc.property(text, publicV4, (clientWritten, client) => {
        const result = resolveWith('x-forwarded-for', `${clientWritten}, ${client}`);
        expect(result.ok && result.address.text).toBe(client);
      }),
      { numRuns: 2_000 },
    );
  });

  // What a client shapes to reach into the proxy's element: open quotes and brackets, addresses
  // with ports and without, escapes, separators (the forms that gave the client's own address
  // before an unterminated quoted-string and a lenient host parse were made a break).
  const adversarial = fc
    .tuple(
      fc.array(fc.constantFrom('for=1.1.1.1', 'proto=http', ';', ',', ' ', '"', 'unknown'), { maxLength: 3 }).map((parts) => parts.join('')),
      fc.constantFrom('for=', 'for="', 'for="[', 'For="[', '"[', '[', ''),
      fc.oneof(fc.ipV4(), fc.ipV6()),
      fc.constantFrom('', ']', ':', ']:', ':80', ':80x', ']x', ']:x', '"', '\\', '"]', ';', ' x'),
      fc.array(fc.constantFrom('"', '[', ']', ':', ',', ';', ' ', '\\', '=', '_x', '\t'), { maxLength: 4 }).map((parts) => parts.join('')),
    )
    .map((parts) => parts.join(''));
  // The proxy's own element as proxies write it: a bare IPv4, quoted with a port, or an IPv6 in brackets.
  const proxyElement = fc.oneof(
    publicV4.map((a) => ({ address: a, element: `for=${a}` })),
    fc.tuple(publicV4, fc.integer({ min: 1, max: 65_535 })).map(([a, p]) => ({ address: a, element: `for="${a}:${String(p)}"` })),
    fc.constantFrom('2001:4860:4860::8888', '2606:4700::1111').map((a) => ({ address: a, element: `for="[${a}]:443";proto=https` })),
  );

  it('Forwarded: for any text a client puts before the proxy\'s element, the caller is that element or the chain breaks, never the client\'s text', () => {
    fc.assert(
      fc.property(fc.oneof(text, adversarial), proxyElement, (clientWritten, proxy) => {
        // The proxy appends to the client's header, or adds a line of its own (HTTP joins them with ", ").
        const result = resolveWith('forwarded', `${clientWritten}, ${proxy.element}`);
        if (result.ok) expect(result.address.text).toBe(proxy.address);
      }),
      { numRuns: 5_000 },
    );
  });

  it('Forwarded: a client that writes well-formed elements never breaks the chain; the proxy\'s element is the caller', () => {
    const element = fc.oneof(fc.ipV4().map((a) => `for=${a}`), fc.ipV6().map((a) => `for="[${a}]:80"`), fc.constant('for=unknown;proto=https'), fc.constant('by=_hidden'));
    fc.assert(
      fc.property(fc.array(element, { maxLength: 5 }), proxyElement, (clientElements, proxy) => {
        const result = resolveWith('forwarded', [...clientElements, proxy.element].join(', '));
        expect(result.ok && result.address.text).toBe(proxy.address);
      }),
      { numRuns: 2_000 },
    );
  });

  it('Forwarded: the forms that once let the client choose its address now break the chain', () => {
    for (const value of ['for="[1.2.3.4], for=8.8.8.8', 'for="1.2.3.4\\, for=8.8.8.8', 'for="1.2.3.4:, for=8.8.8.8', 'for="[1.2.3.4]", for=127.0.0.5']) {
      const result = resolveWith('forwarded', value);
      expect(result.ok).toBe(false);
    }
  });

  it('from an untrusted peer the headers are never read', () => {
    fc.assert(
      fc.property(text, publicV4, fc.constantFrom<TrustedHeader>('x-forwarded-for', 'forwarded', 'x-real-ip'), (value, peer, header) => {
        const result = resolveWith(header, value, peer);
        expect(result.ok && result.address.text).toBe(peer);
      }),
    );
  });
});

describe('what a caller sends to the app', () => {
  const app = createApp(testServices({ limits: { ip: 1e8, dns: 1e8, probe: 1e8, events: 1e8, speedtest: 1e8, rpm: 1e8, turn: 1e8, port: 1e8 } }));
  const post = (body: string | Uint8Array<ArrayBuffer>) =>
    app.fetch(new Request('http://api.test/v1/events', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body }), loopback);

  it('any JSON body is 202 or 400 (413 past 4 KiB), never a 500', async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.json(), fc.jsonValue().map((v) => JSON.stringify({ event: 'speed_test_started', event_id: '7f0c1a52-3b7e-4a31-9f7e-2d0c6a1b9e44', properties: v }))), async (body) => {
        const res = await post(body);
        expect(new TextEncoder().encode(body).length > 4096 ? [413] : [202, 400]).toContain(res.status);
      }),
      { numRuns: 500 },
    );
  });

  it('events with random values for every declared property are 202 or 400, never a 500', async () => {
    const value = fc.oneof(fc.double(), fc.integer(), fc.string(), fc.boolean(), fc.constant(null), fc.constantFrom('web', 'cli', 'light', 'full', 'good', 'timeout'));
    const properties = fc.dictionary(fc.constantFrom('source', 'mode', 'duration_ms', 'download_mbps', 'upload_mbps', 'latency_ms', 'jitter_ms', 'streaming_quality', 'gaming_quality', 'video_call_quality', 'failure_reason', 'tool_version', '__proto__', 'constructor', 'extra'), value);
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('speed_test_started', 'speed_test_completed', 'speed_test_failed', 'speed_test_shared', 'other'), fc.oneof(fc.uuid(), fc.string()), properties, async (event, id, props) => {
        const res = await post(JSON.stringify({ event, event_id: id, properties: props }));
        expect([202, 400]).toContain(res.status);
      }),
      { numRuns: 500 },
    );
  });

  it('random bytes as a body are 400 or 413, never a 500', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 5_000 }), async (bytes) => {
        const res = await post(Uint8Array.from(bytes));
        expect([202, 400, 413]).toContain(res.status);
      }),
      { numRuns: 300 },
    );
  });

  it('any query string on the DNS route is 400 or reaches the (absent) upstream as 503, never a 500', async () => {
    const query = fc.oneof(
      fc.string(),
      fc.string({ unit: fc.constantFrom('name=', 'type=', '&', '%', '%2', 'A', 'PTR', 'a.example', '+', '=', '%E0', '.', '::1', '127.0.0.1') }),
      fc.webQueryParameters(),
    );
    await fc.assert(
      fc.asyncProperty(query, async (q) => {
        const res = await app.fetch(new Request(`http://api.test/v1/dns/resolve?${q}`), loopback);
        expect([400, 503]).toContain(res.status);
      }),
      { numRuns: 1_000 },
    );
  });

  it('any query string on /v1/ip is ignored: 200', async () => {
    await fc.assert(
      fc.asyncProperty(fc.webQueryParameters(), async (q) => {
        expect((await app.fetch(new Request(`http://api.test/v1/ip?${q}`), loopback)).status).toBe(200);
      }),
      { numRuns: 200 },
    );
  });
});
