// Fresh inputs for each target, made with fast-check beside the corpus mutations (mutate.ts):
// random bytes and strings, and inputs shaped like the format (its grammar, or its own encoder),
// which reach far past the first check that random bytes fail.
import fc from 'fast-check';
import type { SharedResult } from '../src/common/speedtest/share.js';
import { encodeResult } from '../src/common/speedtest/share.js';
import { historyFileCsv, historyFileJson } from '../src/common/speedtest/history-file.js';
import type { WatchSummary } from '../web/latency/watch-history.js';

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);
const bytesOf = (arbitrary: fc.Arbitrary<string>): fc.Arbitrary<Uint8Array> => arbitrary.map(utf8);
const join = (parts: (number | Uint8Array)[]): Uint8Array => Uint8Array.from(parts.flatMap((p) => (typeof p === 'number' ? [p] : [...p])));
const u16 = (n: number): number[] => [(n >> 8) & 0xff, n & 0xff];

/** Any text: random code points, whole graphemes (emoji, combining marks), and raw bytes. */
const anyText = fc.oneof(fc.string({ unit: 'binary', maxLength: 200 }), fc.string({ unit: 'grapheme', maxLength: 100 }));
const randomBytes = fc.uint8Array({ maxLength: 600 });

/** Text of `alphabet` pieces: the separators and words a grammar is made of, in any order. */
const piecesOf = (...alphabet: string[]) => fc.string({ unit: fc.constantFrom(...alphabet), maxLength: 40 });

// DNS (RFC 1035 §4.1): a header, one question, records of the allowlisted types and others, each
// with its data and an RDLENGTH that is mostly right.
const label = fc.stringMatching(/^[a-zA-Z0-9_-]{1,12}$/).map(utf8);
const wireName = fc.oneof(
  fc.array(label, { maxLength: 4 }).map((labels) => join([...labels.flatMap((l) => [l.length, l]), 0])),
  fc.constant(Uint8Array.of(0xc0, 12)), // a pointer to the question's name
);
const rdataOf = (type: number): fc.Arbitrary<Uint8Array> => {
  if (type === 1) return fc.uint8Array({ minLength: 4, maxLength: 4 });
  if (type === 28) return fc.uint8Array({ minLength: 16, maxLength: 16 });
  if (type === 2 || type === 5 || type === 12) return wireName;
  if (type === 15) return fc.tuple(fc.nat(0xffff), wireName).map(([preference, name]) => join([...u16(preference), name]));
  if (type === 16) return fc.array(fc.uint8Array({ maxLength: 40 }), { minLength: 1, maxLength: 3 }).map((strings) => join(strings.flatMap((s) => [s.length, s])));
  return fc.uint8Array({ maxLength: 30 });
};
const TYPE_VALUES = [1, 2, 5, 6, 12, 15, 16, 28, 39, 41, 46, 255];
const record = fc
  .tuple(wireName, fc.constantFrom(...TYPE_VALUES))
  .chain(([owner, type]) => fc.tuple(fc.constant(owner), fc.constant(type), fc.nat({ max: 0xffffffff }), rdataOf(type), fc.option(fc.nat(0xffff), { freq: 5 })))
  .map(([owner, type, ttl, rdata, rdlength]) => join([owner, ...u16(type), 0, 1, ...u16(ttl >>> 16), ...u16(ttl), ...u16(rdlength ?? rdata.length), rdata]));
const dnsMessage = fc
  .tuple(fc.nat(0xffff), fc.nat(0xffff), fc.array(label, { maxLength: 4 }), fc.constantFrom(...TYPE_VALUES), fc.array(record, { maxLength: 6 }), fc.array(record, { maxLength: 2 }))
  .map(([id, flags, labels, qtype, answers, authorities]) =>
    join([...u16(id), ...u16(flags | 0x8000), 0, 1, ...u16(answers.length), ...u16(authorities.length), 0, 0, ...labels.flatMap((l) => [l.length, l]), 0, ...u16(qtype), 0, 1, ...answers, ...authorities]),
  );

// PROXY protocol: v1 lines (§2.1) and v2 headers (§2.2) with addresses and TLVs (§2.2.7).
const v1 = fc
  .tuple(fc.constantFrom('TCP4', 'TCP6', 'UNKNOWN', 'TCP5', ''), fc.oneof(fc.ipV4(), fc.ipV6(), fc.ipV4Extended(), fc.constant('::ffff:192.0.2.1')), fc.oneof(fc.ipV4(), fc.ipV6()), fc.nat(70_000), fc.nat(70_000))
  .map(([protocol, source, destination, sp, dp]) => `PROXY ${protocol} ${source} ${destination} ${String(sp)} ${String(dp)}\r\n`);
const tlv = (type: number, value: Uint8Array) => join([type, ...u16(value.length), value]);
const tlvs = fc.array(
  fc.oneof(
    fc.constantFrom('h2', 'http/1.1', 'http/1.0', 'h3', 'spdy/3', '__proto__', '').map((alpn) => tlv(0x01, utf8(alpn))),
    fc
      .tuple(fc.nat(7), fc.constantFrom('TLSv1.3', 'TLSv1.2', 'TLSv1', 'SSLv3', 'TLSv1.4', 'toString', ''))
      .map(([client, version]) => tlv(0x20, join([client, 0, 0, 0, 0, tlv(0x21, utf8(version))]))),
    fc.tuple(fc.nat(255), fc.uint8Array({ maxLength: 20 })).map(([type, value]) => tlv(type, value)),
  ),
  { maxLength: 4 },
);
const v2 = fc
  .tuple(fc.constantFrom(0x20, 0x21, 0x22, 0x11), fc.constantFrom(0x00, 0x11, 0x12, 0x21, 0x22, 0x31, 0x41), fc.oneof(fc.uint8Array({ minLength: 12, maxLength: 12 }), fc.uint8Array({ minLength: 36, maxLength: 36 })), tlvs)
  .map(([versionCommand, family, addresses, extensions]) => {
    const body = join([addresses, ...extensions]);
    return join([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a, versionCommand, family, ...u16(body.length), body]);
  });

// Forwarding headers (RFC 7239 §4, X-Forwarded-For): elements of the grammar, and its pieces in any order.
const node = fc.oneof(fc.ipV4(), fc.ipV6().map((a) => `"[${a}]"`), fc.tuple(fc.ipV4(), fc.nat(70_000)).map(([a, p]) => `"${a}:${String(p)}"`), fc.constantFrom('unknown', '_hidden', '"_x:_y"'));
const element = fc.array(fc.tuple(fc.constantFrom('for', 'by', 'proto', 'host', 'For'), node).map(([k, v]) => `${k}=${v}`), { minLength: 1, maxLength: 3 }).map((pairs) => pairs.join(';'));
const forwarded = fc.oneof(
  fc.array(element, { maxLength: 4 }).map((elements) => elements.join(', ')),
  fc.array(fc.oneof(fc.ipV4(), fc.ipV6(), fc.constantFrom('unknown', '[::1]:80', '1.2.3.4:80')), { maxLength: 4 }).map((hops) => hops.join(', ')),
  piecesOf('for=', '"', '[', ']', ':', ',', ';', ' ', '\\', '=', '1.2.3.4', '::1', '_x', '\t', 'unknown'),
);

// IP literals: both families, the forms parseAddress refuses (short, octal, compatible), zones.
const address = fc.oneof(
  fc.ipV4(),
  fc.ipV6(),
  fc.ipV4Extended(),
  fc.ipV4().map((a) => `::ffff:${a}`),
  fc.ipV4().map((a) => `::${a}`),
  fc.tuple(fc.ipV6(), fc.stringMatching(/^[a-z0-9]{1,8}$/)).map(([a, zone]) => `${a}%${zone}`),
  fc.stringMatching(/^fe80::[0-9a-f]{1,4}%[\x21-\x7e]{1,10}$/),
  fc.stringMatching(/^[0-9a-fA-F:.%]{1,46}$/),
);

// Query strings: the routes' parameters, percent-encodings good and bad.
const query = fc.oneof(
  fc.webQueryParameters(),
  fc.stringMatching(/^(?:(?:name|type|ip|other|n%61me|%6E%61%6D%65)=[A-Za-z0-9%+._:~-]{0,12}&?){0,5}$/),
  piecesOf('name=', 'type=', 'ip=', '&', '=', '%', '%2', '%41', '%E0', '%C3%A9', '+', 'A', 'a.example', '::1'),
);

// Accept, Accept-Encoding and language lists (RFC 9110 §12.5), with quality values.
const accept = fc.oneof(
  fc.stringMatching(/^(?:(?:text|application|\*)\/(?:html|plain|json|problem\+json|\*|xml)(?:;q=(?:0|1|0\.[0-9]{1,3}))?(?:;level=1)?(?:, ?)?){0,5}$/),
  fc.stringMatching(/^(?:(?:br|gzip|identity|deflate|\*|x-gzip)(?:;q=(?:0|1|0\.[0-9]{1,3}))?(?:, ?)?){0,4}$/),
  fc.stringMatching(/^(?:(?:[a-zA-Z]{2}(?:-[a-zA-Z]{2})?|\*)(?:;q=0\.[0-9])?,?){0,4}$/),
  piecesOf('text/html', 'application/json', '*/*', ';q=0', ';q=1', ';q=0.5', ',', ' ', 'br', 'gzip', '*', '"', '='),
);

// Share fragments: results the codec wrote, and its alphabet shaped like its eleven or twelve parts.
const figure = (max: number) => fc.option(fc.double({ min: 0, max, noNaN: true }), { nil: undefined });
const sharedResult: fc.Arbitrary<SharedResult> = fc
  .record({
    at: fc.integer({ min: 0, max: 4_102_444_800 }).map((s) => s * 1000),
    mode: fc.constantFrom('light' as const, 'full' as const),
    downloadBps: figure(1e12),
    uploadBps: figure(1e12),
    latencyMs: figure(3_600_000),
    jitterMs: figure(3_600_000),
    loadedDownMs: figure(3_600_000),
    loadedUpMs: figure(3_600_000),
    lossPercent: figure(100),
    address: fc.option(fc.oneof(fc.ipV4(), fc.ipV6()), { nil: undefined }),
    rpm: fc.option(fc.nat(60_000_000), { nil: undefined }),
  })
  .map((r) => Object.fromEntries(Object.entries(r).filter(([, v]) => v !== undefined)) as unknown as SharedResult);
const share = fc.oneof(sharedResult.map(encodeResult), fc.stringMatching(/^1(?:~[0-9a-z]{0,13}){10,11}$/), piecesOf('1', '~', 'l', 'f', 'zzzzzzzzzzzz', '0', '-', '.', ':', 'a'));

// History files: exports of generated results and watch summaries, JSON and CSV, and JSON at large.
const watch: fc.Arbitrary<WatchSummary> = fc.record({
  at: fc.nat(),
  interval_s: fc.integer({ min: 1, max: 3600 }),
  duration_s: fc.nat(604_800),
  targets: fc.array(
    fc.record({
      label: fc.string({ minLength: 1, maxLength: 80 }),
      polls: fc.nat(1_000_000),
      failed: fc.nat(1_000_000),
      limited: fc.nat(1_000_000),
      median_ms: fc.option(fc.double({ min: 0, max: 3_600_000, noNaN: true })),
      p95_ms: fc.option(fc.double({ min: 0, max: 3_600_000, noNaN: true })),
      jitter_ms: fc.option(fc.double({ min: 0, max: 3_600_000, noNaN: true })),
    }),
    { minLength: 1, maxLength: 3 },
  ),
});
const results = fc.array(sharedResult, { maxLength: 4 });
const history = fc.oneof(
  fc.tuple(results, fc.array(watch, { maxLength: 2 })).map(([r, w]) => historyFileJson(r, w)),
  results.map((r) => historyFileCsv(r)),
  fc.json({ maxDepth: 3 }).map((text) => `{"netdiag_history":1,"results":[${text}]}`),
  fc.stringMatching(/^tested_at,mode,download_mbps\n(?:[0-9T:.Z-]{0,24},(?:full|light|),[0-9.eE+-]{0,8}\n){0,3}$/),
);

// Reverse-zone names (RFC 1035 §3.5, RFC 3596 §2.5): octet and nibble labels, with junk ones,
// upper case and a final dot, and the addresses a PTR names, in each spelling.
const octetLabel = fc.oneof(fc.nat(255).map(String), fc.constantFrom('010', '256', '0/25', 'x', '-1', ''));
const nibbleLabel = fc.oneof(fc.nat(15).map((n) => n.toString(16)), fc.constantFrom('F', '10', 'g', ''));
const reverseZone = fc.oneof(
  fc.tuple(fc.array(octetLabel, { maxLength: 6 }), fc.constantFrom('in-addr.arpa', 'IN-ADDR.ARPA', 'in-addr.arpa.')).map(([labels, suffix]) => [...labels, suffix].join('.')),
  fc.tuple(fc.array(nibbleLabel, { maxLength: 34 }), fc.constantFrom('ip6.arpa', 'IP6.ARPA.', 'ip6.arpa')).map(([labels, suffix]) => [...labels, suffix].join('.')),
  fc.oneof(fc.ipV4(), fc.ipV6(), fc.constantFrom('10.0.0.5', '::ffff:10.0.0.5', '::ffff:a00:5', 'fd00::1', 'fe80::1%eth0', '192.168.1.1', '8.8.8.8')),
);

// Responsiveness configurations: the draft's shape with URLs on the configuration's origin, the
// allowed one, others, and not URLs at all.
const nqUrl = fc.tuple(fc.constantFrom('https://config.test', 'https://allowed.test:8443', 'https://other.test', 'http://config.test', 'https://config.test:444', 'https://CONFIG.test', 'not a url', ''), fc.constantFrom('/s', '/l', '/u', '/internal?x=1', '')).map(([origin, path]) => `${origin}${path}`);
const nqKeys = ['small_download_url', 'large_download_url', 'upload_url', 'small_https_download_url', 'large_https_download_url', 'https_upload_url'];
const rpmConfig = fc.oneof(
  fc.tuple(fc.constantFrom<unknown>(1, 2, '1', null), fc.dictionary(fc.constantFrom(...nqKeys), fc.oneof(nqUrl, fc.jsonValue()), { maxKeys: 6 })).map(([version, urls]) => JSON.stringify({ version, urls })),
  fc.json({ maxDepth: 3 }),
);

/** Each target's fresh inputs, as bytes. */
export const GENERATORS = {
  dns: fc.oneof(randomBytes, dnsMessage),
  'proxy-protocol': fc.oneof(randomBytes, bytesOf(v1), v2, bytesOf(piecesOf('PROXY ', 'TCP4 ', 'TCP6 ', 'UNKNOWN', '1.2.3.4 ', '::1 ', ' ', '\r\n', '\r', '\n', '80'))),
  forwarded: bytesOf(fc.oneof(anyText, forwarded)),
  address: bytesOf(fc.oneof(anyText, address)),
  query: bytesOf(fc.oneof(anyText, query)),
  accept: bytesOf(fc.oneof(anyText, accept)),
  share: bytesOf(fc.oneof(anyText, share)),
  history: bytesOf(fc.oneof(anyText, history)),
  'reverse-zone': bytesOf(fc.oneof(anyText, reverseZone)),
  'rpm-config': bytesOf(fc.oneof(anyText, rpmConfig)),
} satisfies Record<string, fc.Arbitrary<Uint8Array>>;
