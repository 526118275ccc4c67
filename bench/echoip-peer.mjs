// ECHOIP=/path/to/echoip npm run bench:echoip [-- --rounds 3 --warmup 1 --duration 8 --paths /json,/,/country,/asn]
//
// netdiag beside echoip (mpolden/echoip, the Go server behind ifconfig.co) on echoip's own
// ground: the same MaxMind test databases, the same caller, the same load. docs/benchmarks.md,
// "Against echoip", says how to build echoip here; no echoip code is in this repository.
//
// Each round runs `wrk -t1 -c16 -d8s` against echoip, then netdiag as `npm start` starts it (one
// process), then the same with NETDIAG_WORKERS=auto, path by path, so a neighbour's burst on this
// shared machine falls on all of them alike. A server's CPU per request is the utime + stime of
// its process (every thread of it) over the requests wrk completed. The measured rounds follow
// `--warmup` rounds of the same load, not counted: a server is compared as it runs for its users,
// after its first seconds, which for Node's compiler are warm-up that Go's binary has not (the
// first round read 72-98 µs a request for two workers, the later ones 55-66; docs/benchmarks.md).
//
// Both trust X-Forwarded-For from loopback and are told the caller is 89.160.20.112 (a city and
// a network in the test databases). echoip makes no reverse lookup (its default); netdiag always
// asks for the caller's PTR, here of a local upstream that answers NXDOMAIN, as most reverse
// zones do for a home address.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { listeningPort, median, primaryListeningPort, shippedStart, startChild, treeCpuSeconds } from './lib.mjs';

const { values: opts } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    warmup: { type: 'string', default: '1' },
    duration: { type: 'string', default: '8' },
    paths: { type: 'string', default: '/json,/,/country,/asn' },
  },
});
const rounds = Number(opts.rounds);
const paths = opts.paths.split(',');
const CALLER = '89.160.20.112';
// What curl sends: echoip answers `/` in text only to a command-line User-Agent.
const HEADERS = { 'X-Forwarded-For': CALLER, 'User-Agent': 'curl/7.88.1', Accept: '*/*' };

const echoip = process.env.ECHOIP;
if (echoip === undefined || !existsSync(echoip)) {
  console.error('Set ECHOIP to an echoip binary (docs/benchmarks.md, "Against echoip", says how to build one).');
  process.exit(2);
}
if (spawnSync('wrk', ['--version']).error !== undefined) {
  console.error('wrk is not installed (Debian: apt-get install wrk).');
  process.exit(2);
}
const fixtures = (() => {
  const configured = process.env.NETDIAG_MAXMIND_FIXTURES;
  const dir = configured ?? fileURLToPath(new URL('../../shared/fixtures/maxmind/', import.meta.url));
  return dir.endsWith('/') ? dir : `${dir}/`;
})();
const CITY = `${fixtures}GeoLite2-City-Test.mmdb`;
const ASN = `${fixtures}GeoLite2-ASN-Test.mmdb`;
if (!existsSync(CITY) || !existsSync(ASN)) {
  console.error(`No MaxMind test databases at ${fixtures} (set NETDIAG_MAXMIND_FIXTURES).`);
  process.exit(2);
}

async function freePort() {
  const server = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** echoip on a free port, ready once it answers; it logs to stderr, so readiness is polled. */
async function startEcho() {
  const port = await freePort();
  // Its country answers come from a Country database (-f): the City one holds them too. No
  // template folder: echoip then serves no HTML page (the text and JSON answers are the same).
  const child = spawn(echoip, ['-f', CITY, '-c', CITY, '-a', ASN, '-H', 'X-Forwarded-For', '-l', `127.0.0.1:${port}`, '-t', '/nonexistent'], { stdio: ['ignore', 'ignore', 'ignore'] });
  for (let i = 0; i < 100; i++) {
    const up = await fetch(`http://127.0.0.1:${port}/ip`, { headers: HEADERS }).then(() => true, () => false);
    if (up) return { child, port, stop: async () => { child.kill('SIGTERM'); await once(child, 'exit'); } };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill('SIGKILL');
  throw new Error('echoip did not answer within 10 s');
}

/** One wrk run: requests/s, completed requests, non-2xx, and the server's CPU µs per request. */
function wrk(url, pid) {
  const before = treeCpuSeconds(pid);
  const out = execFileSync('wrk', ['-t1', '-c16', `-d${opts.duration}s`, ...Object.entries(HEADERS).flatMap(([k, v]) => ['-H', `${k}: ${v}`]), url], { encoding: 'utf8' });
  const cpu = treeCpuSeconds(pid) - before;
  const requests = Number(/(\d+) requests in/.exec(out)?.[1]);
  const bad = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0) + Number(/Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out)?.slice(1).reduce((a, n) => a + Number(n), 0) ?? 0);
  return { rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]), cpuUsPerReq: (cpu * 1e6) / requests, bad };
}

const upstream = await startChild(process.execPath, [fileURLToPath(new URL('./dns-upstream.mjs', import.meta.url)), '--ptr-nxdomain'], {}, (line) => Number(line));
const start = shippedStart();
const netdiagEnv = {
  ...start.env,
  PORT: '0',
  HOST: '127.0.0.1',
  NETDIAG_GEOIP_CITY: CITY,
  NETDIAG_GEOIP_ASN: ASN,
  NETDIAG_DNS_UPSTREAM: `udp://127.0.0.1:${upstream.port}`,
  NETDIAG_TRUST_PROXY: 'loopback',
  // The limiter stays on (its keyed hash and RateLimit headers are paid for); wrk's one caller
  // would otherwise be refused after 60 requests.
  NETDIAG_RATE_LIMITS: 'ip=100000000',
};
const servers = {
  echoip: await startEcho(),
  'netdiag, 1 process': await startChild(process.execPath, [...start.flags, ...start.args], netdiagEnv, listeningPort),
  'netdiag, workers auto': await startChild(process.execPath, [...start.flags, ...start.args], { ...netdiagEnv, NETDIAG_WORKERS: 'auto' }, primaryListeningPort),
};

// Each server's answer once, before any load: a status other than 200 would make the figures meaningless.
for (const [name, server] of Object.entries(servers)) {
  for (const path of paths) {
    const res = await fetch(`http://127.0.0.1:${server.port}${path}`, { headers: HEADERS });
    const body = await res.text();
    if (res.status !== 200) throw new Error(`${name} answered ${path} with ${res.status}: ${body.slice(0, 200)}`);
    console.log(`${name} ${path}: ${res.status}, ${Buffer.byteLength(body)} bytes${path === '/json' ? '' : `: ${JSON.stringify(body)}`}`);
  }
}

const runs = {};
const warmup = Number(opts.warmup);
for (let round = -warmup; round < rounds; round++) {
  for (const path of paths) {
    for (const [name, server] of Object.entries(servers)) {
      // Two workers matter for throughput on /json; the text paths compare one process with echoip.
      if (name === 'netdiag, workers auto' && path !== '/json') continue;
      const run = wrk(`http://127.0.0.1:${server.port}${path}`, server.child.pid);
      if (round >= 0) (runs[`${path}\t${name}`] ??= []).push(run);
    }
  }
}
for (const server of Object.values(servers)) await server.stop();
await upstream.stop();

const rows = Object.entries(runs).map(([key, list]) => {
  const [path, server] = key.split('\t');
  return {
    path,
    server,
    'requests/s': Math.round(median(list.map((r) => r.rps))),
    'cpu µs/req': Number(median(list.map((r) => r.cpuUsPerReq)).toFixed(1)),
    'cpu µs/req, each round': list.map((r) => r.cpuUsPerReq.toFixed(1)).join(' '),
    'non-2xx/errors': list.reduce((a, r) => a + r.bad, 0),
  };
});
console.log(`\n${rounds} interleaved rounds of wrk -t1 -c16 -d${opts.duration}s after ${warmup} not counted, one caller (${CALLER}), medians:`);
console.table(rows);
const row = (path, server) => rows.find((r) => r.path === path && r.server === server);
/**
 * Each round's netdiag figure over echoip's in the same round: the two ran seconds apart, so a
 * neighbour's burst on this shared machine that moves both cancels out of the ratio.
 */
const roundRatios = (path, server, field) => runs[`${path}\t${server}`].map((r, i) => r[field] / runs[`${path}\techoip`][i][field]);
for (const path of paths) {
  const ours = row(path, 'netdiag, 1 process');
  const theirs = row(path, 'echoip');
  const paired = roundRatios(path, 'netdiag, 1 process', 'cpuUsPerReq');
  console.log(`${path}: netdiag's CPU per request ${(ours['cpu µs/req'] / theirs['cpu µs/req']).toFixed(2)}x echoip's${ours['cpu µs/req'] <= theirs['cpu µs/req'] ? '' : ' *** OVER ***'}; round by round ${paired.map((r) => r.toFixed(2)).join(' ')}, median ${median(paired).toFixed(2)}`);
}
if (paths.includes('/json')) {
  const two = row('/json', 'netdiag, workers auto');
  const theirs = row('/json', 'echoip');
  const paired = roundRatios('/json', 'netdiag, workers auto', 'rps');
  console.log(`/json: netdiag's throughput with NETDIAG_WORKERS=auto ${(two['requests/s'] / theirs['requests/s']).toFixed(2)}x echoip's${two['requests/s'] >= theirs['requests/s'] ? '' : ' *** UNDER ***'}; round by round ${paired.map((r) => r.toFixed(2)).join(' ')}, median ${median(paired).toFixed(2)}`);
}
