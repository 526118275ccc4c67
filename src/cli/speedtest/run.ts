// Runs a speed test from Node against a deployment's /__down and /__up. The configuration's plan
// gives the idle latency (its latency steps: empty downloads timed as the engine times them) and
// which directions to measure; each direction is then measured under working conditions
// (src/common/speedtest/working.ts, the page's rules too): STREAMS parallel streams keep the link
// busy with no pause between transfers, the bytes are counted as they move, and round trips are
// timed on a connection of their own until the rate has been steady for the mode's window or its
// time is up. node:http rather than fetch: its socket events give the moment a request starts on
// an open connection (Resource Timing's requestStart), so connection set-up never counts as
// latency, and its streams give each chunk as it arrives.
import http from 'node:http';
import https from 'node:https';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Schemas } from '../../generated/openapi-types.js';
import { problemText } from '../api/client.js';
import { LimitRefusal, pastLimit, retryAfterSeconds, type LimitWaits } from '../../common/rate-limit.js';
import { notWaitedText } from '../api/rate-limit.js';
import { settledWithin } from '../../common/settled-within.js';
import { jitterOf } from '../../common/statistics.js';
import { latencyOf } from '../../common/speedtest/latency-quality.js';
import {
  directionDone,
  measureDirection,
  profileOf,
  CHECK_MS,
  FIRST_UPLOAD_BYTES,
  SAMPLE_MS,
  MAX_UPLOAD_BYTES,
  nextUploadBytes,
  probeGapMs,
  PROBES_IN_FLIGHT,
  STREAMS,
  UPLOAD_ANSWER_GRACE_MS,
  type DirectionMeasure,
  type LoadProfile,
  receivedProgress,
  receivedUpload,
  bodyTiming,
  type Progress as Count,
  type Received,
  type RoundTrip,
} from '../../common/speedtest/working.js';

/** A step of the plan, as the contract defines it. */
type Measurement = Schemas['SpeedTestMeasurement'];
type Direction = 'download' | 'upload';

export interface Progress {
  /** What is being measured now: `latency`, `download`, `upload`, then `done`. */
  phase: string;
  /**
   * Work done and planned, in milliseconds: each idle ping counts PING_WEIGHT_MS, each direction
   * its profile's longest time, so the bar moves with time spent. The total shrinks when a
   * direction ends early (its rate was steady).
   */
  done: number;
  total: number;
}

/** What one idle ping counts for in Progress: about a round trip. */
const PING_WEIGHT_MS = 25;

/** A direction measured: its figures, the streams that loaded it, and the counts they were read from. */
export interface DirectionResult {
  measure: DirectionMeasure;
  streams: number;
  /** The raw counts, for recording (NETDIAG_SPEEDTEST_RECORD, speedtest/command.ts). */
  series: { progress: Count[]; roundTrips: RoundTrip[]; endMs: number };
}

export interface Result {
  /** Each direction the plan asked for. */
  download?: DirectionResult;
  upload?: DirectionResult;
  latency?: number;
  jitter?: number;
  /** The median round trip within each direction's window (working.ts). */
  downLoadedLatency?: number;
  upLoadedLatency?: number;
  /** Requests made, round trips included. */
  requests: number;
  durationMs: number;
  /** The server's rate limit refused a request this many times, and the run waited this long in all, as it asked. */
  limitWaits: LimitWaits;
}

/** What a run needs besides the plan: the mode (its load profile) and the largest transfer the deployment takes. */
interface RunOptions {
  mode: string;
  maxBytesPerRequest: number;
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

const cancelled = () => new SpeedTestFailure('cancelled', 'the test was cancelled');

/** A request the server's rate limit refused (429), with the wait it asked for (undefined: none given). */
export class RateLimited extends SpeedTestFailure {
  constructor(
    message: string,
    readonly retryAfterS: number | undefined,
  ) {
    super('engine_error', message);
  }
}

/** A wait for the rate limit, as the run tells it to the command: what was refused, how long, and what comes after. */
export interface LimitWait {
  seconds: number;
  then: string;
}

interface Exchange {
  /** When the request started on an open connection (performance.now()). */
  startMs: number;
  /** From that start to the response's first byte. */
  ttfb: number;
  /** The server's own duration from Server-Timing, when it sent one. */
  serverTime: number | undefined;
  /** How an upload's body arrived, when the server said (`body;dur=` and its quarters). */
  body: ReturnType<typeof bodyTiming>;
}

interface Send {
  method: 'GET' | 'POST';
  path: string;
  agent: http.Agent;
  body?: Buffer;
  /** Aborted when the direction ends: the request is then given up, and that is no failure. */
  stop?: AbortSignal;
  /** Each chunk of a successful response's body, as it arrives. */
  onData?: (bytes: number) => void;
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

/** A round trip: time to first byte less the server's own time (the engine's ping). */
const roundTripOf = (x: Exchange) => Math.max(0, x.ttfb - (x.serverTime ?? 0));

/** One direction under load: its counts, its round trips, and the signal that ends it. */
class Load {
  /** The counts: a download's as its bytes arrive, an upload's from the uploads received so far. */
  progress: Count[] = [];
  readonly #received: Received[] = [];
  readonly roundTrips: RoundTrip[] = [];
  readonly began = performance.now();
  readonly #stop = new AbortController();
  /** Aborted when every request in flight is given up: the direction ended (after an upload's grace), failed, or the run was cancelled. */
  readonly signal = this.#stop.signal;
  readonly #starting = new AbortController();
  /** Aborted when no transfer or round trip is to be started any more: the direction ended, or `signal` was aborted. */
  readonly starting = this.#starting.signal;
  failure: Error | undefined;
  /** The direction has ended (stopStarting): what fails after it is only not counted. */
  #ended = false;
  #bytes = 0;
  #sampledAt = -Infinity;
  readonly #cancel: AbortSignal;
  // A cancel ends the direction too (not AbortSignal.any: the client package runs on Node 20.0).
  readonly #cancelled = () => {
    this.#abortAll();
  };

  constructor(readonly type: Direction, cancel: AbortSignal) {
    this.#cancel = cancel;
    if (cancel.aborted) this.#abortAll();
    else cancel.addEventListener('abort', this.#cancelled, { once: true });
  }

  /** Ms since the direction began, the clock of its counts and round trips. */
  now(): number {
    return performance.now() - this.began;
  }

  /** A download's bytes as they arrive; a count kept at most every SAMPLE_MS. */
  arrived(bytes: number): void {
    if (this.signal.aborted) return;
    this.#bytes += bytes;
    const at = this.now();
    if (at - this.#sampledAt < SAMPLE_MS) return;
    this.progress.push({ atMs: at, bytes: this.#bytes });
    this.#sampledAt = at;
  }

  /**
   * An upload the server has answered, so it has all of it: its bytes placed in the time they
   * arrived (receivedUpload), from the server's `Server-Timing` or, without it, from when it was sent.
   */
  confirmed(stream: number, bytes: number, sentAt: number, body: ReturnType<typeof bodyTiming>): void {
    if (this.signal.aborted) return;
    this.#received.push(receivedUpload(stream, bytes, sentAt - this.began, this.now(), body));
    this.progress = receivedProgress(this.#received);
  }

  #abortAll(): void {
    this.#starting.abort();
    this.#stop.abort();
  }

  /** No transfer or round trip is started after this; those in flight go on until end(). */
  stopStarting(): void {
    this.#ended = true;
    this.#starting.abort();
  }

  /**
   * Ends the direction at `atMs`. A download's bytes are counted up to this moment, so its last
   * count is taken now; an upload's last count stays its last answer (working.ts reads the time
   * after it as bytes not yet counted, not as a slower link).
   */
  end(atMs: number): void {
    if (this.type === 'download' && !this.signal.aborted) this.progress.push({ atMs, bytes: this.#bytes });
    this.#abortAll();
    this.#cancel.removeEventListener('abort', this.#cancelled);
  }

  /** A stream or the round trips failed: the first failure ends the direction and is the run's. */
  fail(err: unknown): void {
    // An upload given its grace (UPLOAD_ANSWER_GRACE_MS) that fails, as a server's body deadline
    // may end one a stall held back for seconds (408), is left out; the figures stand.
    if (this.#ended) return;
    this.failure ??= err instanceof Error ? err : new SpeedTestFailure('network_error', String(err));
    this.#abortAll();
  }
}

const agentFor = (secure: boolean, maxSockets: number) =>
  secure ? new https.Agent({ keepAlive: true, maxSockets }) : new http.Agent({ keepAlive: true, maxSockets });

export class SpeedTestRun {
  readonly #base: URL;
  readonly #secure: boolean;
  /** The connections for the idle pings and the round trips under load, apart from the streams (PROBES_IN_FLIGHT). */
  readonly #probeAgent: http.Agent;
  readonly #request: typeof http.request;
  readonly #idleMs: number;
  readonly #abort = new AbortController();
  /** The upload body, allocated once at the largest size a stream may send and cut to each size. */
  #uploadBuffer: Buffer | undefined;
  #requests = 0;

  /** `idleMs`: a request that moves no byte for this long fails the run as `timeout`. */
  constructor(base: string, idleMs: number) {
    this.#base = new URL(base);
    this.#secure = this.#base.protocol === 'https:';
    this.#probeAgent = agentFor(this.#secure, PROBES_IN_FLIGHT);
    this.#request = this.#secure ? https.request : http.request;
    this.#idleMs = idleMs;
  }

  /** Stops the run: it fails with `cancelled`. */
  cancel(): void {
    this.#abort.abort();
  }

  /** Closes the connections a run keeps (run() does too; this is for a run that never started). */
  close(): void {
    this.#probeAgent.destroy();
  }

  /**
   * One request, settled when its response has ended: with its timing, or undefined when `stop`
   * ended it first. A kept-alive connection the server closes (its idle timeout) just as a
   * request is written on it fails that request with ECONNRESET before any answer; the request is
   * sent once more, as browsers and Node's own documentation do. Nothing was measured by the
   * failed attempt, and the targets keep nothing, so sending again changes no figure.
   */
  #send(s: Send, retried = false): Promise<Exchange | undefined> {
    return new Promise((resolve, reject) => {
      if (this.#abort.signal.aborted) {
        reject(cancelled());
        return;
      }
      if (s.stop?.aborted === true) {
        resolve(undefined);
        return;
      }
      this.#requests++;
      const url = new URL(s.path, this.#base);
      const headers: Record<string, string | number> = { Accept: '*/*' };
      if (s.body !== undefined) Object.assign(headers, { 'Content-Type': 'text/plain', 'Content-Length': s.body.length });
      const req = this.#request(url, { method: s.method, agent: s.agent, headers, signal: s.stop ?? this.#abort.signal, timeout: this.#idleMs });
      let start = 0;
      let answered = false;
      // A request ends once: a cut response reports on the response alone, an abort on both.
      const failed = (err: Error) => {
        if (err instanceof SpeedTestFailure) reject(err);
        else if (this.#abort.signal.aborted) reject(cancelled());
        else if (s.stop?.aborted === true) resolve(undefined);
        else {
          const code = (err as NodeJS.ErrnoException).code;
          if (!retried && !answered && req.reusedSocket && (code === 'ECONNRESET' || code === 'EPIPE')) {
            resolve(this.#send(s, true));
            return;
          }
          reject(new SpeedTestFailure('network_error', `${s.method} ${url.pathname} failed: ${code ?? err.message}`));
        }
      };
      req.on('socket', (socket) => {
        const mark = () => (start = performance.now());
        // A new connection: its request starts once it is open (and, over TLS, secured).
        if (socket.connecting) socket.once(this.#secure ? 'secureConnect' : 'connect', mark);
        else mark();
      });
      req.on('timeout', () => req.destroy(new SpeedTestFailure('timeout', `no data from ${url.origin} for ${String(this.#idleMs)} ms`)));
      req.on('error', failed);
      req.on('response', (res) => {
        answered = true;
        const first = performance.now();
        const status = res.statusCode ?? 0;
        const refused = status < 200 || status > 299;
        let problem = '';
        res.on('data', (chunk: Buffer) => {
          // A refusal's problem document says why; a few kilobytes of it are plenty.
          if (refused) {
            if (problem.length < 4096) problem += chunk.toString('utf8');
          } else s.onData?.(chunk.length);
        });
        res.on('end', () => {
          if (refused) {
            const words = `${s.method} ${url.pathname} answered ${String(status)}: ${problemText(problem, status)}`;
            reject(status === 429 ? new RateLimited(words, retryAfterSeconds(res.headers['retry-after'])) : new SpeedTestFailure('engine_error', words));
            return;
          }
          const serverTiming = res.headers['server-timing'];
          const timing = Array.isArray(serverTiming) ? serverTiming.join(', ') : serverTiming;
          resolve({ startMs: start, ttfb: first - start, serverTime: serverTimeOf(timing), body: bodyTiming(timing) });
        });
        res.on('error', failed);
      });
      req.end(s.body);
    });
  }

  /** An idle ping: an empty download marked idle. */
  async #ping(): Promise<number> {
    const x = await this.#send({ method: 'GET', path: '/__down?bytes=0&during=idle', agent: this.#probeAgent });
    // Without a stop signal a request only ends with its answer or a failure.
    if (x === undefined) throw cancelled();
    return roundTripOf(x);
  }

  /** A download stream: the largest download the server allows, again and again, counted as it arrives. */
  async #downloadStream(load: Load, agent: http.Agent, maxBytes: number): Promise<void> {
    while (!load.signal.aborted) {
      await this.#send({ method: 'GET', path: `/__down?bytes=${String(maxBytes)}`, agent, stop: load.signal, onData: (n) => {
          load.arrived(n);
        },
      });
    }
  }

  /** An upload stream: uploads sized to last about UPLOAD_TARGET_MS each, one after another, counted as each is answered. */
  async #uploadStream(load: Load, stream: number, agent: http.Agent, cap: number): Promise<void> {
    let bytes = Math.min(FIRST_UPLOAD_BYTES, cap);
    while (!load.starting.aborted) {
      const sent = performance.now();
      const x = await this.#send({ method: 'POST', path: '/__up', agent, body: this.#uploadBody(bytes, cap), stop: load.signal });
      if (x === undefined) return;
      load.confirmed(stream, bytes, sent, x.body);
      bytes = nextUploadBytes(bytes, performance.now() - sent, cap);
    }
  }

  /** The engine uploads a string of ASCII zeros: one buffer of the largest size, cut to each upload's. */
  #uploadBody(bytes: number, cap: number): Buffer {
    if (this.#uploadBuffer === undefined || this.#uploadBuffer.length < cap) this.#uploadBuffer = Buffer.alloc(cap, 0x30);
    return this.#uploadBuffer.subarray(0, bytes);
  }

  /**
   * Round trips beside the load, on connections of their own, until the direction ends: one
   * started every `gapMs` while fewer than PROBES_IN_FLIGHT are waiting for their answers.
   */
  async #probes(load: Load, gapMs: number): Promise<void> {
    const inFlight = new Set<Promise<void>>();
    while (!load.starting.aborted) {
      if (inFlight.size < PROBES_IN_FLIGHT) {
        const probe: Promise<void> = this.#probe(load)
          .catch((err: unknown) => {
            load.fail(err);
          })
          .finally(() => inFlight.delete(probe));
        inFlight.add(probe);
      }
      await sleep(gapMs, undefined, { signal: load.starting }).catch(() => undefined);
    }
    await Promise.all(inFlight);
  }

  async #probe(load: Load): Promise<void> {
    const x = await this.#send({ method: 'GET', path: `/__down?bytes=0&during=${load.type}`, agent: this.#probeAgent, stop: load.signal });
    if (x !== undefined) load.roundTrips.push({ atMs: x.startMs - load.began, ms: roundTripOf(x) });
  }

  /**
   * One direction: STREAMS streams on connections of their own and the round trips, until the
   * rate has been steady for the profile's window or its time is up (directionDone); then every
   * request in flight is given up (uploads after UPLOAD_ANSWER_GRACE_MS, so their bytes count)
   * and the counts are read (measureDirection).
   */
  async #direction(type: Direction, profile: LoadProfile, maxBytes: number, tick: (elapsedMs: number) => void): Promise<DirectionResult> {
    const agent = agentFor(this.#secure, STREAMS);
    const load = new Load(type, this.#abort.signal);
    const cap = Math.min(maxBytes, MAX_UPLOAD_BYTES);
    const stream = (_: unknown, i: number) => (type === 'download' ? this.#downloadStream(load, agent, maxBytes) : this.#uploadStream(load, i, agent, cap));
    const guarded = (w: Promise<void>) =>
      w.catch((err: unknown) => {
        load.fail(err);
      });
    const streams = Array.from({ length: STREAMS }, stream).map(guarded);
    const probes = guarded(this.#probes(load, probeGapMs(profile)));
    let endMs = 0;
    try {
      for (;;) {
        endMs = load.now();
        if (load.signal.aborted || directionDone(load.progress, load.roundTrips, endMs, profile)) break;
        tick(endMs);
        await sleep(CHECK_MS, undefined, { signal: load.signal }).catch(() => undefined);
      }
    } finally {
      load.stopStarting();
      // Round trips still out are not waited for: one lost again and again may take seconds.
      if (type === 'upload') await settledWithin(Promise.all(streams), UPLOAD_ANSWER_GRACE_MS, load.signal);
      load.end(endMs);
      await Promise.all([...streams, probes]);
      agent.destroy();
    }
    if (this.#abort.signal.aborted) throw cancelled();
    if (load.failure !== undefined) throw load.failure;
    return {
      measure: measureDirection(load.progress, load.roundTrips, endMs, profile),
      streams: STREAMS,
      series: { progress: load.progress, roundTrips: load.roundTrips, endMs },
    };
  }

  /**
   * `step` again after each 429 it meets, once the server's Retry-After has passed (the shared
   * rule, src/common/rate-limit.ts): a refused idle ping is sent again, a refused direction
   * measured again from its start (its figures would hold a pause the link never had). A refusal
   * it cannot wait out ends the run as RateLimited, saying why.
   */
  async #pastLimit<T>(step: () => Promise<T>, then: string, waits: LimitWaits, onWait: (w: LimitWait) => void): Promise<T> {
    const wait = async (seconds: number) => {
      onWait({ seconds, then });
      await sleep(seconds * 1000, undefined, { signal: this.#abort.signal }).catch(() => undefined);
      if (this.#abort.signal.aborted) throw cancelled();
    };
    try {
      return await pastLimit(step, (err) => (err instanceof RateLimited ? (err.retryAfterS ?? undefined) : null), waits, wait);
    } catch (err) {
      if (!(err instanceof LimitRefusal)) throw err;
      const refused = err.refusal as RateLimited;
      throw new RateLimited(`${refused.message} (not waited: ${notWaitedText(err.notWaited)})`, refused.retryAfterS);
    }
  }

  /**
   * The plan's latency steps first (idle pings, one after another), then each direction the
   * plan has a step of, download first, under the mode's load profile. The transfer steps' sizes
   * and counts are not used: a direction runs until its rate is steady, as working.ts rules.
   */
  async run(plan: Measurement[], onProgress: (p: Progress) => void, options: RunOptions, onWait: (w: LimitWait) => void = () => undefined): Promise<Result> {
    const started = performance.now();
    const profile = profileOf(options.mode);
    const pingCount = plan.reduce((n, m) => n + (m.type === 'latency' ? (m.packet_count ?? 1) : 0), 0);
    const directions = (['download', 'upload'] as const).filter((d) => plan.some((m) => m.type === d));
    let total = pingCount * PING_WEIGHT_MS + directions.length * profile.maxMs;
    let done = 0;
    const result: Result = { requests: 0, durationMs: 0, limitWaits: { count: 0, ms: 0 } };
    try {
      const pings: number[] = [];
      for (let i = 0; i < pingCount; i++) {
        onProgress({ phase: 'latency', done, total });
        pings.push(await this.#pastLimit(() => this.#ping(), 'going on with the idle latency', result.limitWaits, onWait));
        done += PING_WEIGHT_MS;
      }
      result.latency = latencyOf(pings);
      result.jitter = jitterOf(pings);
      for (const type of directions) {
        const before = done;
        const measured = await this.#pastLimit(
          () =>
            this.#direction(type, profile, options.maxBytesPerRequest, (elapsed) => {
              onProgress({ phase: type, done: before + Math.min(elapsed, profile.maxMs), total });
            }),
          `measuring the ${type} again from its start`,
          result.limitWaits,
          onWait,
        );
        // A direction that was steady early ends early: the plan shrinks by the time it did not take.
        const took = Math.min(measured.series.endMs, profile.maxMs);
        total -= profile.maxMs - took;
        done = before + took;
        result[type] = measured;
      }
    } finally {
      this.#probeAgent.destroy();
    }
    onProgress({ phase: 'done', done, total });
    result.downLoadedLatency = result.download?.measure.loaded?.ms;
    result.upLoadedLatency = result.upload?.measure.loaded?.ms;
    result.requests = this.#requests;
    result.durationMs = performance.now() - started;
    return result;
  }
}
