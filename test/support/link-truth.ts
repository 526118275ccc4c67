// What a shaped link (test/support/shaped-link.ts) really carries, measured without the code under
// test: the truth the speed test's figures are held to (issue 48).
//
// - The rate each way: one bulk transfer over four connections (TRUTH_STREAMS), its bytes counted
//   together every 100 ms. Download: bulk GETs of the deployment's /__down, read and counted here
//   (the client's side). Upload: raw bytes into a counting sink run in the server namespace, which
//   counts them as they ARRIVE there, in 100 ms bins of its own clock, and sends back its counts
//   (so nothing the client's send buffer still holds is counted). The transfer spends any bucket,
//   settles for five seconds, then runs five more: the sustained rate is the mean of those last
//   five seconds' 100 ms rates (bytes over time), the burst its peak in the first second and the bytes it carried
//   above the sustained rate (rateTruth).
// - Latency: `ping` (ICMP, every 100 ms) from the client (this namespace) to the server address:
//   idle, then through each bulk transfer's last five seconds, the truth being each set's median
//   round trip of those answered. During a download the echo request crosses the idle upload
//   queue and the reply waits in the loaded download queue; during an upload the other way round,
//   so each direction's figure is that direction's queue.
//
// This file imports only Node's modules and a type of test/support/burst-reference.ts (no code under test).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { BurstReference } from './burst-reference.js';
import type { DirectionShape, ShapedLink } from './shaped-link.js';

export interface DirectionTruth extends BurstReference {
  /** The bulk transfer's rates, Mbit/s per ~100 ms, in order (the first holds the connection's start). */
  rates: number[];
  /** The median ping round trip while the transfer ran, ms (undefined when every ping was lost). */
  loadedMs: number | undefined;
  /** Pings answered and sent while loaded. */
  pings: { answered: number; sent: number };
  /** How long the transfer ran, s. */
  seconds: number;
}

export interface LinkTruth {
  /** The median ping round trip on the idle link, ms. */
  idleMs: number | undefined;
  download: DirectionTruth;
  upload: DirectionTruth;
}

export const median = (values: readonly number[]): number | undefined => {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = (sorted.length - 1) / 2;
  return ((sorted[Math.floor(mid)] ?? 0) + (sorted[Math.ceil(mid)] ?? 0)) / 2;
};

/** Bytes counted into ~100 ms bins from the first one: burst-reference.ts's measureBurstReference's counting. */
class Bins {
  readonly rates: number[] = [];
  private first = -1;
  private mark = 0;
  private inBin = 0;
  add(bytes: number): void {
    const now = performance.now();
    if (this.first < 0) {
      this.first = now;
      this.mark = now;
    }
    this.inBin += bytes;
    if (now - this.mark >= 100) {
      this.rates.push((8 * this.inBin) / ((now - this.mark) * 1000));
      this.inBin = 0;
      this.mark = now;
    }
  }
  /** ms since the first byte (0 before it). */
  elapsed(): number {
    return this.first < 0 ? 0 : performance.now() - this.first;
  }
}

/** The most /__down sends in one request (MAX_BYTES_PER_REQUEST); longer downloads chain requests (only the unshaped path needs to). */
const DOWN_BYTES = 250_000_000;

/**
 * Connections a bulk transfer runs over. One CUBIC flow leaves a small queue idle after each
 * loss (on a 5 Mbit/s link with a 5 ms queue, four frames, one flow moved 4.3 Mbit/s where four
 * moved 4.75): the truth is what the link carries when it is kept full, so four flows, counted
 * together.
 */
const TRUTH_STREAMS = 4;

/** A bulk download from `${base}/__down` over TRUTH_STREAMS connections for `ms` from the first byte: the Mbit/s of every ~100 ms, all together. */
export async function timedDownload(base: string, ms: number): Promise<number[]> {
  const bins = new Bins();
  await Promise.all(Array.from({ length: TRUTH_STREAMS }, () => downloadLoop(base, ms, bins)));
  return bins.rates;
}

/** One connection's downloads, one after another, until the shared count has run `ms`. */
async function downloadLoop(base: string, ms: number, bins: Bins): Promise<void> {
  while (bins.elapsed() < ms) {
    await new Promise<void>((resolve, reject) => {
      let stopped = false;
      const request = http.get(`${base}/__down?bytes=${String(DOWN_BYTES)}`, { agent: false }, (res) => {
        res.on('data', (chunk: Buffer) => {
          bins.add(chunk.length);
          if (!stopped && bins.elapsed() >= ms) {
            stopped = true;
            request.destroy();
            resolve();
          }
        });
        res.on('end', resolve);
        res.on('error', (err) => {
          if (stopped) resolve();
          else reject(err);
        });
      });
      request.on('error', (err) => {
        if (stopped) resolve();
        else reject(err);
      });
    });
  }
}

/**
 * The counting sink, run by `node -e` in the server namespace with the address to listen on. A
 * connection sends 8 ASCII digits (how long to count, ms) and then bytes; the sink counts the
 * bytes as they arrive into 100 ms bins of its own clock (bin k holds what arrived in
 * [100k, 100k + 100) ms of it), so the counts of several connections add up bin by bin on one
 * clock; after that long it answers with its first bin and the counts (JSON, one line), then
 * reads and drops whatever still comes until the sender closes.
 */
const SINK = String.raw`
const net = require('node:net');
const server = net.createServer((socket) => {
  let header = Buffer.alloc(0);
  let ms = -1, first = -1, done = false;
  const counts = [];
  socket.on('error', () => {});
  socket.on('data', (chunk) => {
    if (done) return;
    if (ms < 0) {
      header = Buffer.concat([header, chunk]);
      if (header.length < 8) return;
      ms = Number(header.subarray(0, 8).toString('latin1'));
      chunk = header.subarray(8);
      if (chunk.length === 0) return;
    }
    const bin = Math.floor(performance.now() / 100);
    if (first < 0) {
      first = bin;
      setTimeout(() => { done = true; socket.write(JSON.stringify({ first, counts, until: Math.floor(performance.now() / 100) }) + '\n'); }, ms);
    }
    counts[bin - first] = (counts[bin - first] || 0) + chunk.length;
  });
});
server.listen(0, process.argv[1], () => console.log('sink ' + server.address().port));
`;

export interface UploadSink {
  host: string;
  port: number;
  stop(): Promise<void>;
}

/** Starts the counting sink in the link's server namespace. */
export async function startUploadSink(link: ShapedLink): Promise<UploadSink> {
  const [command, ...args] = link.inServer([process.execPath, '-e', SINK, link.serverAddress]);
  const child = spawn(command ?? 'ip', args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const match = /sink (\d+)/.exec(out);
      if (match) resolve(Number(match[1]));
    });
    child.once('exit', (code) => {
      reject(new Error(`the upload sink exited with ${String(code)}: ${out}`));
    });
  });
  return {
    host: link.serverAddress,
    port,
    stop: async () => {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await once(child, 'exit');
      }
    },
  };
}

/**
 * A bulk upload into the sink over TRUTH_STREAMS connections for `ms` of the sink's counting: the
 * Mbit/s of every 100 ms as the bytes arrived there, all connections together on the sink's clock,
 * from the first connection's first bin to the first one to stop counting (those two bins, which
 * the connections share only in part, left out). A connection whose first bytes came late (on
 * 5 Mbit/s with a 5 ms queue, two frames, one waited out retransmission timeouts for seconds
 * while the other three filled the link) counts nothing before they came: the link carried
 * what the others sent. Each connection's counting runs until the sink's timer ends it (`until`),
 * not to its last bin with bytes: one that sat out timeouts from its first second on held a
 * truth's whole upload to that second and read 0.0 Mbit/s (once in eleven runs of plain-5-q5).
 */
export async function timedUpload(sink: UploadSink, ms: number): Promise<number[]> {
  const each = await Promise.all(Array.from({ length: TRUTH_STREAMS }, () => uploadOne(sink, ms)));
  const first = Math.min(...each.map((c) => c.first));
  const last = Math.min(...each.map((c) => c.until));
  const rates: number[] = [];
  for (let bin = first + 1; bin < last; bin++) {
    const bytes = each.reduce((sum, c) => sum + (c.counts[bin - c.first] ?? 0), 0);
    rates.push((8 * bytes) / (100 * 1000));
  }
  return rates;
}

/** One connection's counts on the sink's clock: its first bin with bytes, each bin's bytes from there, and the bin its counting ended in. */
interface SinkCounts {
  first: number;
  counts: (number | null)[];
  until: number;
}

async function uploadOne(sink: UploadSink, ms: number): Promise<SinkCounts> {
  const socket = net.connect(sink.port, sink.host);
  await once(socket, 'connect');
  const block = Buffer.alloc(256 * 1024, 0x30);
  let reply = '';
  const state = { answered: false };
  const answer = new Promise<SinkCounts>((resolve, reject) => {
    socket.on('data', (d: Buffer) => {
      reply += d.toString();
      if (!state.answered && reply.includes('\n')) {
        state.answered = true;
        resolve(JSON.parse(reply.slice(0, reply.indexOf('\n'))) as SinkCounts);
      }
    });
    socket.on('error', reject);
    socket.on('close', () => {
      if (!state.answered) reject(new Error('the upload sink closed without its counts'));
    });
  });
  const guard = setTimeout(() => socket.destroy(new Error('the upload sink did not answer in time')), ms + 60_000);
  try {
    socket.write(String(Math.round(ms)).padStart(8, '0'));
    const ended = answer.then(() => undefined);
    while (!state.answered && !socket.destroyed) {
      if (!socket.write(block)) await Promise.race([once(socket, 'drain'), ended]);
    }
    return await answer;
  } finally {
    clearTimeout(guard);
    // A reset, not a close: a close lets the kernel go on sending what this socket still holds
    // (megabytes at 5 Mbit/s take seconds), and the next test's idle round trips then met a full
    // upload queue (the CLI's idle latency read 188 ms on the 50/5 link, its test 23.8 s).
    socket.resetAndDestroy();
  }
}

/** `count` pings every `intervalS` from this namespace to `address`: the round trips of those answered, ms. */
export async function pings(address: string, count: number, intervalS = 0.1): Promise<number[]> {
  const child = spawn('ping', ['-n', '-i', String(intervalS), '-c', String(count), '-W', '2', address], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  await once(child, 'close');
  return [...out.matchAll(/time=([0-9.]+) ms/g)].map((m) => Number(m[1]));
}

/**
 * How long a direction's bucket may last before the rate takes over, s (0 without a peak): spent
 * at no more than a quarter over the rate, since this machine's veth pairs move a tbf peak well
 * under its nominal figure when busy (a 200 Mbit/s peak at about 130).
 */
export function bucketSeconds(shape: DirectionShape | undefined): number {
  if (shape?.burst === undefined || shape.peak === undefined) return 0;
  return shape.burst / (((Math.min(shape.peak, shape.rate * 1.25) - shape.rate) * 1e6) / 8);
}

/** How long the bucket takes to refill from empty (it fills at the rate), plus half a second for the queue to drain, s. */
export function refillSeconds(shape: DirectionShape | undefined): number {
  return (shape?.burst === undefined ? 0 : shape.burst / ((shape.rate * 1e6) / 8)) + 0.5;
}

/** The part of a truth transfer its figures are read from, s: its last five seconds, as long as the clients' window. */
const WINDOW_S = 5;
/** And what runs before that part on a link without a bucket, s: as long again, for the queues to fill and the flows to settle. */
const SETTLE_S = 5;

/**
 * Intervals in a row under the burst's bar that end it: one or two are a dip (the shared machine's
 * scheduler held a side for 100-200 ms: a 20 MB bucket's download once read 5.09 MB, its end taken at
 * 0.4 s, while both clients read 18.6-19.1 MB from the same link).
 */
const BURST_END_BINS = 3;

/**
 * A transfer's figures from its 100 ms rates: the sustained rate is the mean of the last
 * WINDOW_S (after any bucket and the settling), the peak the median of the first second (the
 * first interval left out: it holds the connections' start), and the burst's bytes those carried
 * above the sustained rate from the first interval above it (within the first second) to the last
 * one above it before BURST_END_BINS intervals in a row stayed under a tenth above it (a dip
 * between counts what it carried, less than the sustained rate).
 */
export function rateTruth(rates: number[]): BurstReference {
  const bins = rates.slice(1);
  // Bytes over time across the window, as the clients read a rate (a median of 100 ms bins
  // leans with how bursty arrivals are, not with what moved).
  const window = bins.slice(-WINDOW_S * 10);
  const sustainedMbps = window.reduce((sum, r) => sum + r, 0) / Math.max(1, window.length);
  const peakMbps = median(bins.slice(0, 10)) ?? 0;
  const above = (r: number) => r > sustainedMbps * 1.1;
  const first = bins.findIndex(above);
  let burstBytes = 0;
  if (first >= 0 && first < 10) {
    let last = first;
    for (let i = first; i < bins.length && i - last <= BURST_END_BINS; i++) if (above(bins[i] ?? 0)) last = i;
    for (const rate of bins.slice(first, last + 1)) burstBytes += ((rate - sustainedMbps) * 1e6 * 0.1) / 8;
  }
  return { peakMbps, sustainedMbps, burstBytes };
}

/** Pings beside the load: every 100 ms through the transfer's last WINDOW_S. */
const LOADED_PINGS = WINDOW_S * 10;

async function loadedDirection(address: string, shape: DirectionShape | undefined, transfer: (ms: number) => Promise<number[]>): Promise<DirectionTruth> {
  // Any bucket, then SETTLE_S, then the window the figures are read from, with pings through it.
  const pingFromS = bucketSeconds(shape) + SETTLE_S;
  const seconds = pingFromS + WINDOW_S + 0.3;
  const load = transfer(seconds * 1000);
  // Whatever the pings do, the transfer's failure is reported, not left unhandled.
  load.catch(() => undefined);
  await sleep(pingFromS * 1000);
  const loaded = await pings(address, LOADED_PINGS);
  const rates = await load;
  return { ...rateTruth(rates), rates, loadedMs: median(loaded), pings: { answered: loaded.length, sent: LOADED_PINGS }, seconds };
}

/**
 * The link's truth as it is shaped now (`shape` says how, undefined for an unshaped path): idle
 * pings, then a bulk download with pings beside it, then a bulk upload with pings beside it, each
 * after the buckets refilled.
 */
export async function measureLinkTruth(link: ShapedLink, base: string, sink: UploadSink, shape: { down: DirectionShape; up: DirectionShape } | undefined): Promise<LinkTruth> {
  const refill = Math.max(refillSeconds(shape?.down), refillSeconds(shape?.up));
  await sleep(refill * 1000);
  const idleMs = median(await pings(link.serverAddress, 20));
  const download = await loadedDirection(link.serverAddress, shape?.down, (ms) => timedDownload(base, ms));
  await sleep(refill * 1000);
  const upload = await loadedDirection(link.serverAddress, shape?.up, (ms) => timedUpload(sink, ms));
  return { idleMs, download, upload };
}
