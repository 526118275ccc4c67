// Runs a speed-test plan from Node against a deployment's /__down and /__up. The engine the
// configuration names is browser-only (window, Resource Timing, WebRTC), so this takes the same
// timings it reads from Resource Timing off node:http's own events and feeds them to the same
// calculations (src/common/speedtest/metrics.ts). node:http rather than fetch: its socket events give the
// moment a request starts on an open connection (Resource Timing's requestStart), so connection
// set-up never counts as latency.
import http from 'node:http';
import https from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Schemas } from '../generated/openapi-types.js';
import { problemText } from './client.js';
import { jitterOf } from '../common/statistics.js';
import { directionRates, type Burst, type TimedTransfer } from '../common/speedtest/burst.js';
import {
  FINISH_REQUEST_MS,
  latencyOf,
  loadedPings,
  LOADED_LATENCY_THROTTLE_MS,
  type Bandwidth,
} from '../common/speedtest/metrics.js';

/** A step of the plan, as the contract defines it. */
type Measurement = Schemas['SpeedTestMeasurement'];

export interface Progress {
  /** What is being measured now. */
  phase: string;
  /**
   * Work done and planned, in bytes with each request counted as REQUEST_WEIGHT more, so the
   * bar moves with time spent rather than with requests made (twenty pings are not two thirds
   * of a full test). The plan shrinks when a direction finishes early.
   */
  done: number;
  total: number;
}

/** What one request counts for in Progress beyond its bytes: about its round trip's worth. */
const REQUEST_WEIGHT = 100_000;
const weight = (m: Measurement) => (m.type === 'latency' ? (m.packet_count ?? 1) * REQUEST_WEIGHT : (m.request_count ?? 1) * ((m.bytes_per_request ?? 0) + REQUEST_WEIGHT));

export interface Result {
  /** The rate each direction sustains (src/common/speedtest/burst.ts), and the burst before it, if any. */
  download?: Bandwidth;
  upload?: Bandwidth;
  downloadBurst?: Burst;
  uploadBurst?: Burst;
  latency?: number;
  jitter?: number;
  downLoadedLatency?: number;
  upLoadedLatency?: number;
  /** Requests made, side pings included. */
  requests: number;
  durationMs: number;
}

/** Why a run stopped, in the analytics schema's terms (the API contract, failure_reason). */
export class SpeedTestFailure extends Error {
  constructor(
    readonly reason: 'engine_error' | 'network_error' | 'cancelled' | 'timeout',
    message: string,
  ) {
    super(message);
  }
}

interface Exchange {
  /** From the request's start on an open connection to the response's first byte. */
  ttfb: number;
  /** From the first byte to the last. */
  body: number;
  /** The server's own duration from Server-Timing, when it sent one. */
  serverTime: number | undefined;
  /** Body bytes received plus the response head: Resource Timing's transferSize. */
  transferSize: number;
}

/**
 * The server's processing time, read as the engine reads it: `cfRequestDuration;dur=…` (its
 * shorter spellings too), else the sum of `cfSpeed*` entries; durations of 0.01 ms or less are none.
 */
function serverTimeOf(header: string | undefined): number | undefined {
  if (header === undefined) return undefined;
  const single = /(?:^|,\s*)cfReq(?:uest)?Dur(?:ation)?;\s*dur=([0-9.]+)/i.exec(header);
  if (single?.[1] !== undefined && Number(single[1]) > 0.01) return Number(single[1]);
  let sum = 0;
  for (const m of header.matchAll(/(?:^|,\s*)cfSpeed[a-zA-Z]*;\s*dur=([0-9.]+)/gi)) sum += Number(m[1]);
  return sum > 0.01 ? sum : undefined;
}

const uploadBodies = new Map<number, Buffer>();
/** The engine uploads a string of ASCII zeros; one buffer per size, reused. */
function uploadBody(bytes: number): Buffer {
  let body = uploadBodies.get(bytes);
  if (body === undefined) uploadBodies.set(bytes, (body = Buffer.alloc(bytes, 0x30)));
  return body;
}

export class SpeedTestRun {
  readonly #base: URL;
  readonly #agent: http.Agent;
  readonly #request: typeof http.request;
  readonly #idleMs: number;
  readonly #abort = new AbortController();
  #requests = 0;

  /** `idleMs`: a request that moves no byte for this long fails the run as `timeout`. */
  constructor(base: string, idleMs: number) {
    this.#base = new URL(base);
    const secure = this.#base.protocol === 'https:';
    // Two sockets: one for the transfers, one for the pings taken while a transfer runs.
    this.#agent = secure ? new https.Agent({ keepAlive: true, maxSockets: 2 }) : new http.Agent({ keepAlive: true, maxSockets: 2 });
    this.#request = secure ? https.request : http.request;
    this.#idleMs = idleMs;
  }

  /** Stops the run: the request in flight fails with `cancelled`. */
  cancel(): void {
    this.#abort.abort();
  }

  close(): void {
    this.#agent.destroy();
  }

  /**
   * One request. A kept-alive connection the server closes (its idle timeout) just as a request is
   * written on it fails that request with ECONNRESET before any answer; the request is sent once
   * more on a fresh connection, as browsers and Node's own documentation do. On a link with a deep
   * queue the server's close arrives hundreds of milliseconds late, so the race is no longer rare
   * (a light test at 5 Mbit/s through a shaped link failed so in a benchmark run). Nothing was measured by
   * the failed attempt, and the targets keep nothing, so sending again changes no figure.
   */
  #exchange(method: 'GET' | 'POST', path: string, body?: Buffer, retried = false): Promise<Exchange> {
    return new Promise((resolve, reject) => {
      if (this.#abort.signal.aborted) {
        reject(new SpeedTestFailure('cancelled', 'the test was cancelled'));
        return;
      }
      this.#requests++;
      const url = new URL(path, this.#base);
      const headers: Record<string, string | number> = { Accept: '*/*' };
      if (body !== undefined) Object.assign(headers, { 'Content-Type': 'text/plain', 'Content-Length': body.length });
      const req = this.#request(url, { method, agent: this.#agent, headers, signal: this.#abort.signal, timeout: this.#idleMs });
      let start = 0;
      let answered = false;
      req.on('socket', (socket) => {
        const mark = () => (start = performance.now());
        // A new connection: its request starts once it is open (and, over TLS, secured).
        if (socket.connecting) socket.once(url.protocol === 'https:' ? 'secureConnect' : 'connect', mark);
        else mark();
      });
      req.on('timeout', () => req.destroy(new SpeedTestFailure('timeout', `no data from ${url.origin} for ${String(this.#idleMs)} ms`)));
      req.on('error', (err) => {
        if (err instanceof SpeedTestFailure) reject(err);
        else if (this.#abort.signal.aborted) reject(new SpeedTestFailure('cancelled', 'the test was cancelled'));
        else {
          const code = (err as NodeJS.ErrnoException).code;
          if (!retried && !answered && req.reusedSocket && (code === 'ECONNRESET' || code === 'EPIPE')) {
            resolve(this.#exchange(method, path, body, true));
            return;
          }
          reject(new SpeedTestFailure('network_error', `${method} ${url.pathname} failed: ${code ?? err.message}`));
        }
      });
      req.on('response', (res) => {
        answered = true;
        const first = performance.now();
        const status = res.statusCode ?? 0;
        const failed = status < 200 || status > 299;
        let received = 0;
        let problem = '';
        res.on('data', (chunk: Buffer) => {
          received += chunk.length;
          // A refusal's problem document says why; a few kilobytes of it are plenty.
          if (failed && problem.length < 4096) problem += chunk.toString('utf8');
        });
        res.on('end', () => {
          const end = performance.now();
          if (failed) {
            reject(new SpeedTestFailure('engine_error', `${method} ${url.pathname} answered ${String(status)}: ${problemText(problem, status)}`));
            return;
          }
          // The response head as sent: status line, each header line, the blank line.
          let head = `HTTP/${res.httpVersion} ${String(status)} ${res.statusMessage ?? ''}\r\n\r\n`.length;
          for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) head += (res.rawHeaders[i] ?? '').length + (res.rawHeaders[i + 1] ?? '').length + 4;
          const serverTiming = res.headers['server-timing'];
          resolve({ ttfb: first - start, body: end - first, serverTime: serverTimeOf(Array.isArray(serverTiming) ? serverTiming.join(', ') : serverTiming), transferSize: received + head });
        });
        res.on('error', (err) => req.destroy(err));
      });
      req.end(body);
    });
  }

  /** An empty download: the round trip less the server's own time (the engine's ping). */
  async #ping(during: 'idle' | 'download' | 'upload'): Promise<number> {
    const x = await this.#exchange('GET', `/__down?bytes=0&during=${during}`);
    return Math.max(0, x.ttfb - (x.serverTime ?? 0));
  }

  /** One transfer, with the bytes it moved and when it ended (for the burst rules, src/common/speedtest/burst.ts). */
  async #transfer(type: 'download' | 'upload', bytes: number): Promise<TimedTransfer> {
    if (type === 'download') {
      const x = await this.#exchange('GET', `/__down?bytes=${String(bytes)}`);
      const ping = Math.max(0, x.ttfb - (x.serverTime ?? 0));
      // Download time is the ping plus the body's arrival, over the bytes that came (head included).
      const duration = ping + x.body;
      return { ping, duration, bps: duration > 0 ? (8 * x.transferSize) / (duration / 1000) : undefined, bytes: x.transferSize, endMs: performance.now() };
    }
    const x = await this.#exchange('POST', '/__up', uploadBody(bytes));
    // An upload is done when the server answers, so its time to first byte is its duration; the
    // engine counts 0.5% over the body for the request's head.
    const duration = x.ttfb;
    const sent = bytes * 1.005;
    return { ping: Math.max(0, x.ttfb - (x.serverTime ?? 0)), duration, bps: duration > 0 ? (8 * sent) / (duration / 1000) : undefined, bytes: sent, endMs: performance.now() };
  }

  /** Pings every 400 ms until `stop` is aborted, as the engine does while a transfer runs. */
  async #sidePings(during: 'download' | 'upload', into: number[], stop: AbortSignal): Promise<void> {
    while (!stop.aborted) {
      into.push(await this.#ping(during));
      await sleep(LOADED_LATENCY_THROTTLE_MS, undefined, { signal: stop }).catch(() => undefined);
    }
  }

  /**
   * Runs the plan in order: latency steps add to one list of pings; each transfer step is a
   * round of equal requests, with side pings alongside; a direction ends after a round whose
   * fastest request took over a second, and its later (larger) steps are skipped.
   */
  async run(plan: Measurement[], onProgress: (p: Progress) => void): Promise<Result> {
    const started = performance.now();
    const pings: number[] = [];
    const rounds = { download: [] as { timings: TimedTransfer[]; sidePings: number[] }[], upload: [] as { timings: TimedTransfer[]; sidePings: number[] }[] };
    const finished = { download: false, upload: false };
    let total = plan.reduce((n, m) => n + weight(m), 0);
    let done = 0;
    for (const [index, m] of plan.entries()) {
      if (m.type === 'latency') {
        for (let i = 0; i < (m.packet_count ?? 1); i++) {
          onProgress({ phase: 'latency', done, total });
          pings.push(await this.#ping('idle'));
          done += REQUEST_WEIGHT;
        }
        continue;
      }
      const count = m.request_count ?? 1;
      if (finished[m.type]) {
        total -= weight(m);
        continue;
      }
      const round = { timings: [] as TimedTransfer[], sidePings: [] as number[] };
      const stop = new AbortController();
      // A failed side ping fails the run, as in the engine, once its round is over.
      let sideFailure: Error | undefined;
      const side = this.#sidePings(m.type, round.sidePings, stop.signal).catch((err: unknown) => {
        sideFailure = err instanceof Error ? err : new SpeedTestFailure('network_error', String(err));
      });
      try {
        for (let i = 0; i < count; i++) {
          onProgress({ phase: `${m.type} ${formatBytes(m.bytes_per_request ?? 0)}`, done, total });
          round.timings.push(await this.#transfer(m.type, m.bytes_per_request ?? 0));
          done += (m.bytes_per_request ?? 0) + REQUEST_WEIGHT;
        }
      } finally {
        stop.abort();
        await side;
      }
      if (sideFailure !== undefined) throw sideFailure;
      rounds[m.type].push(round);
      const last = !plan.slice(index + 1).some((later) => later.type === m.type);
      if (last || Math.min(...round.timings.map((t) => t.duration)) > FINISH_REQUEST_MS) finished[m.type] = true;
    }
    onProgress({ phase: 'done', done, total });
    const download = directionRates(rounds.download.flatMap((r) => r.timings));
    const upload = directionRates(rounds.upload.flatMap((r) => r.timings));
    return {
      download: download.sustained,
      upload: upload.sustained,
      downloadBurst: download.burst,
      uploadBurst: upload.burst,
      latency: latencyOf(pings),
      jitter: jitterOf(pings),
      downLoadedLatency: latencyOf(loadedPings(rounds.download)),
      upLoadedLatency: latencyOf(loadedPings(rounds.upload)),
      requests: this.#requests,
      durationMs: performance.now() - started,
    };
  }
}

function formatBytes(bytes: number): string {
  if (bytes >= 1e6) return `${String(bytes / 1e6)} MB`;
  if (bytes >= 1e3) return `${String(bytes / 1e3)} kB`;
  return `${String(bytes)} B`;
}
