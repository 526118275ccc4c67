// Runs a speed test from Node against a deployment's /__down and /__up. The configuration's plan
// gives the idle latency (its latency steps: empty downloads timed as the speed-test library times them) and
// which directions to measure; each direction is then measured under working conditions by the
// load loop the page runs too (src/common/speedtest/load-loop.ts, over this client's node:http
// transport, http-transport.ts). What stays here is the command line's own: the plan's steps, the
// progress bar's weights, and the rate limit's waits around each step.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Schemas } from '../../generated/openapi-types.js';
import { LimitRefusal, pastLimit, type LimitWaits } from '../../common/rate-limit.js';
import { notWaitedText } from '../api/rate-limit.js';
import { jitterOf } from '../../common/statistics.js';
import { latencyOf } from '../../common/speedtest/latency-quality.js';
import { LoadCancelled, runLoadedDirection } from '../../common/speedtest/load-loop.js';
import { LoadRefused, type LoadDirection } from '../../common/speedtest/load-transport.js';
import { profileOf, type DirectionMeasure, type LoadProfile, type ByteCount as Count, type RoundTrip } from '../../common/speedtest/working.js';
import { cancelled, HttpLoadTransport, SpeedTestFailure, type TransportOptions } from './http-transport.js';
import type { BytesMoved } from './socket-meter.js';

export { SpeedTestFailure } from './http-transport.js';

/** A step of the plan, as the contract defines it. */
type Measurement = Schemas['SpeedTestMeasurement'];

export interface RunProgress {
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

/** What one idle ping counts for in RunProgress: about a round trip. */
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
  /** The bytes the run's connections carried each way, every exchange counted (socket-meter.ts). */
  moved: BytesMoved;
  durationMs: number;
  /** The server's rate limit refused a request this many times, and the run waited this long in all, as it asked. */
  limitWaits: LimitWaits;
}

/** What a run needs besides the plan: the mode (its load profile) and the largest transfer the deployment takes. */
interface RunOptions {
  mode: string;
  maxBytesPerRequest: number;
}

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

export class SpeedTestRun {
  readonly #abort = new AbortController();
  readonly #transport: HttpLoadTransport;

  /** `idleMs`: a request that moves no byte for this long fails the run as `timeout`; `options`: its streams and how its connections are made. */
  constructor(base: string, idleMs: number, options: TransportOptions = {}) {
    this.#transport = new HttpLoadTransport(base, idleMs, this.#abort.signal, options);
  }

  /** Stops the run: it fails with `cancelled`. */
  cancel(): void {
    this.#abort.abort();
  }

  /** Closes the connections a run keeps (run() does too; this is for a run that never started). */
  close(): void {
    this.#transport.close();
  }

  /** An idle ping: an empty download marked idle. */
  async #ping(n: number): Promise<number> {
    return (await this.#transport.roundTrip('idle', n, this.#abort.signal)).ms;
  }

  /**
   * One direction under load (load-loop.ts), on connections of its own; the progress bar moved by
   * its time. A cancel is said in the command's words.
   */
  async #direction(direction: LoadDirection, profile: LoadProfile, maxBytes: number, tick: (elapsedMs: number) => void): Promise<DirectionResult> {
    const onProgress = (_: unknown, elapsedMs: number) => {
      tick(elapsedMs);
    };
    try {
      const run = await runLoadedDirection(this.#transport, { direction, maxBytes, profile, streams: this.#transport.streams, signal: this.#abort.signal, onProgress });
      return { measure: run.measure, streams: run.streams, series: { progress: run.progress, roundTrips: run.roundTrips, endMs: run.endMs } };
    } catch (err: unknown) {
      throw err instanceof LoadCancelled ? cancelled() : err;
    } finally {
      this.#transport.closeStreams();
    }
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
      return await pastLimit(step, (err) => (err instanceof LoadRefused ? (err.retryAfterS ?? undefined) : null), waits, wait);
    } catch (err) {
      if (!(err instanceof LimitRefusal)) throw err;
      const refused = err.refusal as LoadRefused;
      throw new RateLimited(`${refused.message} (not waited: ${notWaitedText(err.notWaited)})`, refused.retryAfterS);
    }
  }

  /**
   * The plan's latency steps first (idle pings, one after another), then each direction the
   * plan has a step of, download first, under the mode's load profile. The transfer steps' sizes
   * and counts are not used: a direction runs until its rate is steady, as working.ts rules.
   */
  async run(plan: Measurement[], onProgress: (p: RunProgress) => void, options: RunOptions, onWait: (w: LimitWait) => void = () => undefined): Promise<Result> {
    const started = performance.now();
    const profile = profileOf(options.mode);
    const pingCount = plan.reduce((n, m) => n + (m.type === 'latency' ? (m.packet_count ?? 1) : 0), 0);
    const directions = (['download', 'upload'] as const).filter((d) => plan.some((m) => m.type === d));
    let total = pingCount * PING_WEIGHT_MS + directions.length * profile.maxMs;
    let done = 0;
    const result: Result = { requests: 0, moved: { down: 0, up: 0 }, durationMs: 0, limitWaits: { count: 0, ms: 0 } };
    try {
      const pings: number[] = [];
      for (let i = 0; i < pingCount; i++) {
        onProgress({ phase: 'latency', done, total });
        pings.push(await this.#pastLimit(() => this.#ping(i), 'going on with the idle latency', result.limitWaits, onWait));
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
      this.#transport.close();
    }
    onProgress({ phase: 'done', done, total });
    result.downLoadedLatency = result.download?.measure.loaded?.ms;
    result.upLoadedLatency = result.upload?.measure.loaded?.ms;
    result.requests = this.#transport.requests;
    result.moved = this.#transport.meter.moved();
    result.durationMs = performance.now() - started;
    return result;
  }
}
