// What parsing a long list header costs, and what the cap of issue 50 leaves of it: Accept-Encoding
// through negotiator (as src/core/http/static-asset.ts does) and X-Forwarded-For into hops (as
// src/core/net/caller-address.ts does), whole and capped (src/core/header-cap.ts), for
// header shapes up to Node's 16 KiB. `npm run build`, then `node bench/list-headers.mjs`. Rounds
// of each case interleave; the figure is the median µs per parse.
import Negotiator from 'negotiator';
import { listHead, listTail } from '../dist/core/header-cap.js';
import { xForwardedForChain } from '../dist/core/net/forwarded.js';

const OFFERED = ['br', 'gzip', 'identity'];
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const repeat = (unit, joiner = ', ') => Array.from({ length: Math.ceil(15_000 / (unit.length + joiner.length)) }, () => unit).join(joiner);

const negotiate = (value) => new Negotiator({ headers: { 'accept-encoding': value } }).encoding(OFFERED, { preferred: OFFERED });
const CASES = {
  'Accept-Encoding, browser (short)': ['gzip, deflate, br, zstd', negotiate, listHead],
  'Accept-Encoding, 15 KB of weighted codings': [repeat('gzip;q=0.1', ','), negotiate, listHead],
  'Accept-Encoding, 15 KB of unknown codings': [repeat('x-coding;q=0.5'), negotiate, listHead],
  'Accept-Encoding, 15 KB of commas': [','.repeat(15_000), negotiate, listHead],
  'X-Forwarded-For, two hops (short)': ['203.0.113.7, 198.51.100.1', xForwardedForChain, (v) => listTail(v).tail],
  'X-Forwarded-For, 15 KB of hops': [`${repeat('198.18.0.1')}, 8.8.8.8`, xForwardedForChain, (v) => listTail(v).tail],
};

function usPerCall(fn) {
  const started = performance.now();
  let calls = 0;
  while (performance.now() - started < 200) {
    fn();
    calls += 1;
  }
  return ((performance.now() - started) * 1000) / calls;
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const figures = new Map(Object.keys(CASES).map((name) => [name, { whole: [], capped: [] }]));
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, [value, parse, cap]] of Object.entries(CASES)) {
    figures.get(name).whole.push(usPerCall(() => parse(value)));
    figures.get(name).capped.push(usPerCall(() => parse(cap(value))));
  }
}
for (const [name, { whole, capped }] of figures) console.log(`${name}: whole ${median(whole).toFixed(1)} µs, capped ${median(capped).toFixed(1)} µs`);
