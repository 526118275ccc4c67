// Writes the seed corpus, fuzz/corpus/<target>/<what it is>, from the project's own encoders
// where it has them (encodeQuery, encodeResult, historyFileJson, historyFileCsv) and from the formats'
// specifications otherwise. Deterministic: rerun it after changing a seed, and commit the files.
//   node --experimental-transform-types --import ./fuzz/register.ts fuzz/make-corpus.ts
// Regression inputs (regression-*) are written by hand from findings and left alone here.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import dnsPacket from 'dns-packet';
import type { DnsType } from '../src/common/dns-types.js';
import { encodeResult, type SharedResult } from '../src/common/speedtest/share.js';
import { encodeQuery } from '../src/engines/dns/wire.js';
import { historyFileCsv, historyFileJson } from '../src/common/speedtest/history-file.js';
import type { WatchSummary } from '../web/latency/watch-history.js';
import { CORPUS_ROOT } from './corpus.js';

function write(target: string, name: string, content: Uint8Array | string): void {
  const dir = join(CORPUS_ROOT, target);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, name), content);
}

const u16 = (n: number) => [n >> 8, n & 0xff];
const bytes = (...parts: (number | number[] | Uint8Array | string)[]): Uint8Array =>
  Uint8Array.from(parts.flatMap((p) => (typeof p === 'number' ? [p] : typeof p === 'string' ? [...Buffer.from(p, 'latin1')] : [...p])));

// DNS (RFC 1035 §4.1). A response made from the project's own query: QR and RA set, the answers
// between the question and the query's OPT record (the last 11 octets), names compressed to the
// question's (a pointer to offset 12, §4.1.4), as resolvers answer.
function responseTo(name: string, type: DnsType, rcode: number, answers: Uint8Array[], flags = 0x8180): Uint8Array {
  const query = encodeQuery(name, type);
  const question = query.subarray(12, query.length - 11);
  return bytes(0x4e, 0x44, ...u16(flags | rcode), 0, 1, ...u16(answers.length), 0, 0, 0, 1, question, ...answers, query.subarray(query.length - 11));
}
const rr = (owner: number[] | Uint8Array, type: number, ttl: number, rdata: Uint8Array) => bytes(owner, ...u16(type), 0, 1, ...u16(ttl >>> 16), ...u16(ttl & 0xffff), ...u16(rdata.length), rdata);
const AT_QUESTION = [0xc0, 12];
const wireName = (name: string) => bytes(...name.split('.').flatMap((l) => [l.length, ...Buffer.from(l, 'latin1')]), 0);

write('dns', 'a-two-addresses', responseTo('www.example.test', 'A', 0, [rr(AT_QUESTION, 1, 300, bytes(192, 0, 2, 1)), rr(AT_QUESTION, 1, 60, bytes(192, 0, 2, 2))]));
write('dns', 'aaaa', responseTo('www.example.test', 'AAAA', 0, [rr(AT_QUESTION, 28, 3600, bytes(0x20, 0x01, 0x0d, 0xb8, ...Array<number>(11).fill(0), 1))]));
write('dns', 'cname-then-a', responseTo('alias.example.test', 'A', 0, [rr(AT_QUESTION, 5, 120, wireName('www.example.test')), rr(wireName('www.example.test'), 1, 300, bytes(192, 0, 2, 10))]));
write('dns', 'mx', responseTo('example.test', 'MX', 0, [rr(AT_QUESTION, 15, 3600, bytes(0, 10, ...wireName('mail.example.test'))), rr(AT_QUESTION, 15, 3600, bytes(0, 20, 4, ...Buffer.from('mx2'), 0xc0, 12))]));
write('dns', 'txt-strings-and-non-utf8', responseTo('example.test', 'TXT', 0, [rr(AT_QUESTION, 16, 60, bytes(11, 'v=spf1 -all', 3, 0xff, 0xfe, 0x80, 0))]));
write('dns', 'ns', responseTo('example.test', 'NS', 0, [rr(AT_QUESTION, 2, 86400, wireName('ns1.example.test')), rr(AT_QUESTION, 2, 172800, bytes(3, 'ns2', 0xc0, 12))]));
write('dns', 'ptr', responseTo('10.2.0.192.in-addr.arpa', 'PTR', 0, [rr(AT_QUESTION, 12, 3600, wireName('host.example.test'))]));
write('dns', 'name-with-escapes', responseTo('example.test', 'TXT', 0, [rr(bytes(3, 'a.b', 2, 0x00, 0x5c, 0xc0, 12), 16, 60, bytes(1, 'x'))]));
write('dns', 'dname-and-rrsig-skipped', responseTo('www.example.test', 'A', 0, [rr(AT_QUESTION, 39, 60, wireName('example.net')), rr(AT_QUESTION, 46, 60, bytes(0, 1, 8, 2)), rr(AT_QUESTION, 1, 60, bytes(198, 51, 100, 7))]));
write('dns', 'opt-in-answers', responseTo('www.example.test', 'A', 0, [bytes(0, 0, 41, 0x04, 0xd0, 0, 0, 0, 0, 0, 0), rr(AT_QUESTION, 1, 60, bytes(192, 0, 2, 1))]));
write('dns', 'truncated', responseTo('example.test', 'TXT', 0, [], 0x8380));
write('dns', 'servfail', responseTo('example.test', 'A', 2, []));
write('dns', 'refused', responseTo('example.test', 'A', 5, []));
// Negative answers with the zone's SOA in the authority section (RFC 2308 §3), by dns-packet.
const soa = { type: 'SOA' as const, name: 'example.test', ttl: 3600, data: { mname: 'ns1.example.test', rname: 'hostmaster.example.test', serial: 1, refresh: 7200, retry: 900, expire: 1209600, minimum: 300 } };
write('dns', 'nxdomain-with-soa', dnsPacket.encode({ type: 'response', id: 7, flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | 3, questions: [{ type: 'A', name: 'nope.example.test' }], authorities: [soa] }));
write('dns', 'nodata-with-soa', dnsPacket.encode({ type: 'response', id: 8, flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE, questions: [{ type: 'AAAA', name: 'v4only.example.test' }], authorities: [soa] }));
write('dns', 'root-question', responseTo('', 'NS', 0, [rr(bytes(0), 2, 518400, wireName('a.root-servers.net'))]));

// PROXY protocol v1 (proxy-protocol.txt §2.1), with the client's first bytes after the line.
const HTTP = 'GET / HTTP/1.1\r\nHost: example.test\r\n\r\n';
write('proxy-protocol', 'v1-tcp4', `PROXY TCP4 192.0.2.1 198.51.100.1 56324 443\r\n${HTTP}`);
write('proxy-protocol', 'v1-tcp6', 'PROXY TCP6 2001:db8::1 2001:db8::2 56324 443\r\n');
write('proxy-protocol', 'v1-tcp6-mapped', 'PROXY TCP6 ::ffff:192.0.2.1 ::ffff:198.51.100.1 56324 443\r\n');
write('proxy-protocol', 'v1-unknown', 'PROXY UNKNOWN\r\n');
write('proxy-protocol', 'v1-unknown-with-addresses', 'PROXY UNKNOWN ffff:f...f:ffff ffff:f...f:ffff 65535 65535\r\n');
write('proxy-protocol', 'v1-longest', 'PROXY TCP6 ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff 65535 65535\r\n');
// v2 (§2.2): the signature, version 2 and a command, family and transport, length, addresses, TLVs.
const SIGNATURE = [0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a];
const v2 = (command: number, family: number, body: Uint8Array) => bytes(SIGNATURE, 0x20 | command, family, ...u16(body.length), body);
const tlv = (type: number, value: Uint8Array) => bytes(type, ...u16(value.length), value);
const IPV4_PAIR = bytes(192, 0, 2, 1, 198, 51, 100, 1, ...u16(56324), ...u16(443));
const IPV6_PAIR = bytes(0x20, 0x01, 0x0d, 0xb8, ...Array<number>(11).fill(0), 1, 0x20, 0x01, 0x0d, 0xb8, ...Array<number>(11).fill(0), 2, ...u16(56324), ...u16(443));
write('proxy-protocol', 'v2-local', v2(0, 0x00, bytes()));
write('proxy-protocol', 'v2-tcp4', bytes(v2(1, 0x11, IPV4_PAIR), HTTP));
write('proxy-protocol', 'v2-tcp6', v2(1, 0x21, IPV6_PAIR));
write('proxy-protocol', 'v2-unspec', v2(1, 0x00, bytes()));
write('proxy-protocol', 'v2-tcp4-alpn-ssl', v2(1, 0x11, bytes(IPV4_PAIR, tlv(0x01, bytes('h2')), tlv(0x20, bytes(0x07, 0, 0, 0, 0, tlv(0x21, bytes('TLSv1.3')), tlv(0x22, bytes('TLS_AES_128_GCM_SHA256')))))));
write('proxy-protocol', 'v2-tcp6-crc-noop-tlvs', v2(1, 0x21, bytes(IPV6_PAIR, tlv(0x03, bytes(0, 0, 0, 0)), tlv(0x04, bytes(0, 0, 0)), tlv(0x05, bytes('unique-id')))));
// A TLS ClientHello's first bytes after the header, as on a TLS listener behind the proxy.
write('proxy-protocol', 'v2-then-tls', bytes(v2(1, 0x11, IPV4_PAIR), 0x16, 0x03, 0x01, 0x00, 0xc8, 0x01, 0x00, 0x00, 0xc4, 0x03, 0x03));

// Forwarded (RFC 7239 §4, §7 examples) and X-Forwarded-For as proxies write them.
write('forwarded', 'rfc7239-obfuscated', 'for="_gazonk"');
write('forwarded', 'rfc7239-ipv6-port', 'For="[2001:db8:cafe::17]:4711"');
write('forwarded', 'rfc7239-pairs', 'for=192.0.2.60;proto=http;by=203.0.113.43');
write('forwarded', 'rfc7239-two-elements', 'for=192.0.2.43, for=198.51.100.17');
write('forwarded', 'rfc7239-unknown-and-quoted', 'for=unknown, for="192.0.2.43:8080";proto=https, for="[2001:db8::1]"');
write('forwarded', 'xff-chain', '203.0.113.195, 70.41.3.18, 150.172.238.178');
write('forwarded', 'xff-ipv6-and-ports', '2001:db8:85a3:8d3:1319:8a2e:370:7348, [2001:db8::1]:443, 192.0.2.1:8080');
write('forwarded', 'xff-unknown', 'unknown, 10.0.0.1');

// IP literals: what parseAddress takes, canonicalises and refuses.
for (const [name, text] of [
  ['v4', '192.0.2.1'], ['v4-zero', '0.0.0.0'], ['v4-broadcast', '255.255.255.255'], ['v6-unspecified', '::'], ['v6-loopback', '::1'],
  ['v6-doc', '2001:db8::1'], ['v6-upper-uncompressed', '2001:DB8:0:0:0:0:0:1'], ['v6-full', '1:2:3:4:5:6:7:8'], ['v4-mapped-dotted', '::ffff:192.0.2.1'],
  ['v4-mapped-hex', '::ffff:c000:201'], ['link-local-zone', 'fe80::1%eth0'], ['v4-compatible', '::8.8.8.8'], ['v4-short', '127.1'], ['v4-leading-zero', '01.2.3.4'],
  ['v4-with-zone', '8.8.8.8%eth0'], ['v6-embedded-v4', '64:ff9b::192.0.2.33'],
]) write('address', name ?? '', text ?? '');

// Query strings as the routes are asked.
write('query', 'dns', 'name=example.com&type=A');
write('query', 'dns-idn-encoded', 'name=b%C3%BCcher.example&type=AAAA');
write('query', 'ip-encoded', 'ip=2001%3Adb8%3A%3A1');
write('query', 'ip-and-others', 'format=json&ip=192.0.2.1&x=%ZZ');
write('query', 'plus-and-encoded-key', 'n%61me=a+b.example&type=TXT');
write('query', 'empty', '');

// Accept headers as browsers, curl and libraries send them; Accept-Encoding and language lists.
write('accept', 'browser', 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8');
write('accept', 'json', 'application/json');
write('accept', 'curl', '*/*');
write('accept', 'problem-json-no-text', 'text/plain;q=0, application/problem+json');
write('accept', 'encoding-browser', 'gzip, deflate, br, zstd');
write('accept', 'encoding-weighted', 'br;q=1.0, gzip;q=0.8, *;q=0.1');
write('accept', 'encoding-no-identity', 'identity;q=0');
write('accept', 'language', 'de-AT,de;q=0.9,en;q=0.8');
write('accept', 'language-ja', 'ja,en-US;q=0.7,ar;q=0.3');

// Share fragments, from the codec itself.
const FULL: SharedResult = { at: Date.UTC(2026, 10, 25, 18, 0, 5), mode: 'full', downloadBps: 412_512_345, uploadBps: 9_534_567, latencyMs: 4.448, jitterMs: 0.371, loadedDownMs: 48.123, loadedUpMs: 311.5, lossPercent: 1.25 };
const LIGHT: SharedResult = { at: Date.UTC(2026, 10, 26, 9, 5), mode: 'light', downloadBps: 18_000_000, uploadBps: 9_000_000, latencyMs: 20 };
write('share', 'full', encodeResult(FULL));
write('share', 'light', encodeResult(LIGHT));
write('share', 'with-address-v6', encodeResult({ ...FULL, address: '2001:db8::7' }));
write('share', 'with-address-v4-and-rpm', encodeResult({ ...FULL, address: '192.0.2.7', rpm: 1234 }));
write('share', 'nothing-measured', encodeResult({ at: 0, mode: 'light' }));

// History exports, from the page's own exporters.
const WATCH: WatchSummary = {
  at: Date.UTC(2026, 10, 26, 10),
  interval_s: 5,
  duration_s: 600,
  targets: [
    { label: 'you → this server', polls: 120, failed: 1, limited: 0, median_ms: 12.5, p95_ms: 30.25, jitter_ms: 2.5 },
    { label: 'this server → Western Europe', polls: 120, failed: 0, limited: 2, median_ms: null, p95_ms: null, jitter_ms: null },
  ],
};
write('history', 'export.json', historyFileJson([FULL, LIGHT, { ...FULL, at: FULL.at + 60_000, rpm: 900 }], [WATCH]));
write('history', 'export-no-watches.json', historyFileJson([LIGHT]));
write('history', 'export.csv', historyFileCsv([FULL, LIGHT]));
write('history', 'export-crlf.csv', historyFileCsv([FULL, LIGHT]).replaceAll('\n', '\r\n'));
write('history', 'empty.json', historyFileJson([]));
