// Helpers for the benchmark: child servers, CPU time from /proc, autocannon runs, medians.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

const random = (n) => Math.floor(Math.random() * n);

/** A public IPv4 address, not in any special-use range (TEST-NETs, private, CGNAT, multicast …). */
export function publicCaller() {
  for (;;) {
    const a = 1 + random(223);
    if ([10, 100, 127, 169, 172, 192, 198, 203].includes(a)) continue;
    return `${a}.${random(256)}.${random(256)}.${1 + random(254)}`;
  }
}

/** utime + stime of a process, in seconds (proc(5), fields 14 and 15). */
export function cpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
}

/** Resident set size of a process, in MiB. */
export function rssMiB(pid) {
  return statusMiB(pid, 'VmRSS');
}

/**
 * Of a process's resident memory, the pages mapped from files (`RssFile`): for Node, mostly the
 * `node` executable's own code (about 55 MB once a server has run), clean and shared with every
 * other process running it, which the kernel can drop and read back.
 */
export function fileBackedMiB(pid) {
  return statusMiB(pid, 'RssFile');
}

/** One kB figure of /proc/<pid>/status, in MiB. */
function statusMiB(pid, field) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 1024;
}

/**
 * Starts a child and resolves once `ready(line)` returns a port from its stdout. The lines it
 * prints after that are kept in `output` (a collector's count, a service's warnings).
 */
export async function startChild(command, args, env, ready) {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout });
  const output = [];
  let port;
  await new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${command} exited with ${code} before it was ready`)));
    lines.on('line', (line) => {
      if (port !== undefined) {
        output.push(line);
        return;
      }
      port = ready(line);
      if (port !== undefined) resolve();
    });
  });
  const closed = once(lines, 'close');
  return {
    child,
    port,
    output,
    stop: async () => {
      child.kill('SIGTERM');
      await Promise.all([once(child, 'exit'), closed]);
    },
  };
}

/** The port of a `netdiag serve` or `netdiag probe` "listening" log line, else undefined. */
export function listeningPort(line) {
  try {
    const entry = JSON.parse(line);
    return entry.msg === 'listening' ? entry.port : undefined;
  } catch {
    return undefined;
  }
}

/** The port of the primary thread's "listening" line (it says so after every worker thread listens), else undefined. */
export function primaryListeningPort(line) {
  try {
    const entry = JSON.parse(line);
    return entry.msg === 'listening' && entry.role === 'primary' ? entry.port : undefined;
  } catch {
    return undefined;
  }
}

/**
 * One load run; returns requests/s, latency percentiles and server CPU µs per request. With
 * `callerHeader`, every request names a new public caller in that header, as real traffic does
 * (per-caller limiter state and lookups are then paid for, not shared).
 */
export async function load({ url, method = 'GET', headers, body, pid, duration, connections, tree = false, callerHeader }) {
  const cpuOf = tree ? treeCpuSeconds : cpuSeconds;
  const before = cpuOf(pid);
  const requests =
    callerHeader === undefined
      ? undefined
      : [{ setupRequest: (request) => ({ ...request, headers: { ...request.headers, [callerHeader]: publicCaller() } }) }];
  const result = await autocannon({ url, method, headers, body, duration, connections, pipelining: 1, requests });
  const cpu = cpuOf(pid) - before;
  const completed = result.requests.total;
  const bad = result.non2xx + result.errors + result.timeouts;
  return {
    rps: result.requests.average,
    ok: result['2xx'],
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuUsPerReq: completed > 0 ? (cpu * 1e6) / completed : NaN,
    bad,
  };
}

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** utime + stime of a process (all its threads) and all its descendants. */
export function treeCpuSeconds(pid) {
  let total = cpuSeconds(pid);
  let children = [];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    // The process has gone: its CPU time is no longer readable.
  }
  for (const child of children) total += treeCpuSeconds(child);
  return total;
}

/** Sequential requests, one at a time, timed each: latency percentiles with µs resolution. */
export async function sequentialLatency(url, count, headers = {}) {
  const { Client } = await import('undici');
  const origin = new URL(url);
  const client = new Client(origin.origin);
  const times = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    const res = await client.request({ path: origin.pathname + origin.search, method: 'GET', headers });
    await res.body.dump();
    times.push(performance.now() - started);
  }
  await client.close();
  times.sort((a, b) => a - b);
  const at = (p) => times[Math.min(times.length - 1, Math.ceil(p * times.length) - 1)];
  return { p50: at(0.5), p99: at(0.99) };
}

/**
 * The headers the service sends with a JSON success on a rate-limited route, as a flat list for
 * `writeHead`: what the hand-written floor servers (events-floor.mjs, ip-floor.mjs) write, so
 * they pay for the same response the service does.
 */
export function serviceLikeHeaders(requestId, body, rate = { limit: 60, remaining: 59, reset: 60 }) {
  return [
    'Cache-Control', 'no-store', 'X-Request-ID', requestId, 'Access-Control-Allow-Origin', '*',
    'Access-Control-Expose-Headers', 'X-Request-ID, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After',
    'RateLimit-Limit', String(rate.limit), 'RateLimit-Remaining', String(rate.remaining), 'RateLimit-Reset', String(rate.reset),
    'Content-Type', 'application/json', 'Content-Length', String(Buffer.byteLength(body)),
  ];
}

/**
 * `npm start`'s command as package.json ships it, split into its environment, Node flags and
 * script, so this compares what an operator runs (MALLOC_ARENA_MAX=2 MALLOC_TRIM_THRESHOLD_=131072 MALLOC_MMAP_THRESHOLD_=32768 node --max-semi-space-size=4 --heap-growing-percent=20 …).
 */
export function shippedStart() {
  const script = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).scripts.start;
  const words = script.split(/\s+/);
  const at = words.indexOf('node');
  const env = Object.fromEntries(words.slice(0, at).map((w) => w.split('=')));
  const rest = words.slice(at + 1);
  const main = rest.findIndex((w) => w.endsWith('.js'));
  return { env, flags: rest.slice(0, main), args: rest.slice(main).map((w, i) => (i === 0 ? fileURLToPath(new URL(`../${w}`, import.meta.url)) : w)) };
}
