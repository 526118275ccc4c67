// The speed test's load, one direction at a time, for the page and the command line alike: the
// link kept busy by STREAMS parallel streams with no pause between their transfers (a pause lets
// a shaper's token bucket refill, and the link then reads faster than it is), the bytes counted
// as they move, round trips timed beside the load on connections of their own, and the direction
// ended by the rules in working.ts. The exchanges are the client's (load-transport.ts).
import { pause, settledWithin } from '../settled-within.js';
import type { LoadDirection, LoadTransport, RoundTripMark } from './load-transport.js';
import type { BodyTiming } from './server-timing.js';
import {
  CHECK_MS,
  countsUntil,
  directionDone,
  FIRST_UPLOAD_BYTES,
  MAX_UPLOAD_BYTES,
  measureDirection,
  nextUploadBytes,
  probeGapMs,
  PROBES_IN_FLIGHT,
  receivedProgress,
  receivedUpload,
  SAMPLE_MS,
  MAX_STREAMS,
  STREAMS,
  UPLOAD_ANSWER_GRACE_MS,
  type DirectionMeasure,
  type LoadProfile,
  type ByteCount,
  type Received,
  type RoundTrip,
} from './working.js';

/** The pause between idle round trips, ms: they are sent one after another. */
const IDLE_GAP_MS = 10;

/** A direction as it ran: what it counted and timed, when it ended, and what the rules read of it. */
export interface LoadRun {
  direction: LoadDirection;
  streams: number;
  progress: ByteCount[];
  roundTrips: RoundTrip[];
  /** When the direction was stopped, ms since it began: what measureDirection was given. */
  endMs: number;
  measure: DirectionMeasure;
}

interface LoadOptions {
  direction: LoadDirection;
  /** The configuration's limits.max_bytes_per_request: a download asks for this much at once. */
  maxBytes: number;
  profile: LoadProfile;
  /** Parallel streams (1..MAX_STREAMS); STREAMS when not given. */
  streams?: number;
  /** Cancels the direction: every exchange is aborted and the run rejects with LoadCancelled. */
  signal: AbortSignal;
  /**
   * The counts so far and the time since the direction began, at each check (a live view, a
   * progress bar and a stall check read them), and after an upload direction's end, until its
   * uploads in flight are answered, those counts cut at the end.
   */
  onProgress: (progress: readonly ByteCount[], elapsedMs: number) => void;
}

/** The direction was cancelled through its signal. */
export class LoadCancelled extends Error {
  constructor() {
    super('the test was cancelled');
  }
}

/**
 * The bytes of all of a direction's streams in one counter. A download's chunks are recorded at
 * most every SAMPLE_MS, each record at the time of the last chunk it holds, so a pause in the
 * data is never spread over the time before it; an upload is placed in the time it arrived once
 * it is answered.
 */
class ByteCounter {
  progress: ByteCount[] = [];
  private readonly uploads: Received[] = [];
  private total = 0;
  private lastAt = 0;
  private closed = false;

  constructor(private readonly began: number) {}

  add(bytes: number): void {
    if (this.closed) return;
    this.total += bytes;
    this.lastAt = performance.now() - this.began;
  }

  record(): void {
    const last = this.progress.at(-1);
    if (this.uploads.length === 0 && this.total > 0 && last?.bytes !== this.total) this.progress.push({ atMs: this.lastAt, bytes: this.total });
  }

  /** An upload the server answered: its bytes placed in the time they arrived (receivedUpload), from its marks or, without them, from when it was sent. */
  received(stream: number, bytes: number, sentAt: number, answeredAt: number, body: BodyTiming | undefined): void {
    if (this.closed) return;
    this.uploads.push(receivedUpload(stream, bytes, sentAt - this.began, answeredAt - this.began, body));
    this.progress = receivedProgress(this.uploads);
  }

  /** The last record, then nothing more: exchanges still finishing after the stop are not counted. */
  close(): void {
    this.record();
    this.closed = true;
  }
}

/**
 * A direction's two stops: `starting` is aborted when it ends (nothing more is started; what is in
 * flight goes on), `stop` when every exchange in flight is given up. A cancel aborts both, and
 * the first failure does too and is the direction's; one after the end is only not counted (an
 * upload given its grace that a server's body deadline ends, 408, UPLOAD_ANSWER_GRACE_MS).
 */
class DirectionStops {
  readonly starting = new AbortController();
  readonly stop = new AbortController();
  failure: Error | undefined;
  readonly #cancel: AbortSignal;
  readonly #cancelled = () => {
    this.abortAll();
  };

  constructor(cancel: AbortSignal) {
    this.#cancel = cancel;
    if (cancel.aborted) this.abortAll();
    else cancel.addEventListener('abort', this.#cancelled, { once: true });
  }

  abortAll(): void {
    this.starting.abort();
    this.stop.abort();
  }

  /** `run` settled: a rejection before the end is the direction's failure, the first one only. */
  guarded = (run: Promise<void>): Promise<void> =>
    run.catch((err: unknown) => {
      if (!this.starting.signal.aborted) this.failure ??= err instanceof Error ? err : new Error(String(err));
      this.abortAll();
    });

  /** Every exchange given up and the cancel no longer listened to; what the direction ends with. */
  finish(): void {
    this.abortAll();
    this.#cancel.removeEventListener('abort', this.#cancelled);
    if (this.#cancel.aborted) throw new LoadCancelled();
    if (this.failure !== undefined) throw this.failure;
  }
}

/** Downloads one after another until `stop`, each chunk counted as it arrives. */
async function downloadStream(transport: LoadTransport, maxBytes: number, counter: ByteCounter, stop: AbortSignal): Promise<void> {
  const onBytes = (bytes: number) => {
    counter.add(bytes);
  };
  while (!stop.aborted) await transport.download(maxBytes, onBytes, stop);
}

/** Uploads one after another until `starting` is aborted, each sized by the last (nextUploadBytes); each in flight ends with its answer or `stop`. */
async function uploadStream(transport: LoadTransport, stream: number, cap: number, counter: ByteCounter, stops: DirectionStops): Promise<void> {
  let bytes = Math.min(FIRST_UPLOAD_BYTES, cap);
  while (!stops.starting.signal.aborted) {
    const sentAt = performance.now();
    const body = await transport.upload(bytes, stops.stop.signal);
    if (stops.stop.signal.aborted) return;
    const answeredAt = performance.now();
    counter.received(stream, bytes, sentAt, answeredAt, body);
    bytes = nextUploadBytes(bytes, answeredAt - sentAt, cap);
  }
}

/** One round trip, kept with when it was sent: answered in full, it counts even when the direction stopped meanwhile. */
async function timedRoundTrip(transport: LoadTransport, mark: RoundTripMark, n: number, began: number, roundTrips: RoundTrip[], signal: AbortSignal): Promise<void> {
  const trip = await transport.roundTrip(mark, n, signal);
  roundTrips.push({ atMs: trip.sentAt - began, ms: trip.ms });
}

/**
 * Round trips beside the load until `starting` is aborted: one started every `gapMs` while fewer
 * than PROBES_IN_FLIGHT are waiting for their answers (or for `stop`), each settled through `guarded`.
 */
async function pacedRoundTrips(transport: LoadTransport, mark: LoadDirection, gapMs: number, began: number, roundTrips: RoundTrip[], stops: DirectionStops): Promise<void> {
  const inFlight = new Set<Promise<void>>();
  for (let n = 0; !stops.starting.signal.aborted; n++) {
    if (inFlight.size < PROBES_IN_FLIGHT) {
      const one: Promise<void> = stops.guarded(timedRoundTrip(transport, mark, n, began, roundTrips, stops.stop.signal)).finally(() => inFlight.delete(one));
      inFlight.add(one);
    }
    await pause(gapMs, stops.starting.signal);
  }
  await Promise.all(inFlight);
}

/** Resolves with the time since `began` once the rules say the direction has measured enough, or it was stopped; the counts given at each check. */
function directionEnd(counter: ByteCounter, roundTrips: readonly RoundTrip[], began: number, options: LoadOptions, stop: AbortSignal): Promise<number> {
  return new Promise<number>((resolve) => {
    const check = setInterval(() => {
      const now = performance.now() - began;
      options.onProgress(counter.progress, now);
      if (stop.aborted || directionDone(counter.progress, roundTrips, now, options.profile)) {
        clearInterval(check);
        resolve(now);
      }
    }, CHECK_MS);
  });
}

/**
 * The uploads in flight answered (or given up) first, so their bytes up to the end count; the
 * counts given meanwhile are cut at the end as the figure reads them (countsUntil), so a live view
 * lands on the figure. Round trips still out are not waited for: one lost again and again may take seconds.
 */
async function uploadsAnswered(streams: Promise<void>[], counter: ByteCounter, endMs: number, options: LoadOptions, stop: AbortSignal): Promise<void> {
  const report = () => {
    options.onProgress(countsUntil(counter.progress, endMs), endMs);
  };
  const reporting = setInterval(report, CHECK_MS);
  await settledWithin(Promise.all(streams), UPLOAD_ANSWER_GRACE_MS, stop);
  clearInterval(reporting);
  report();
}

/** Runs one direction until the rules say it has measured enough (or it fails, or is cancelled). */
export async function runLoadedDirection(transport: LoadTransport, options: LoadOptions): Promise<LoadRun> {
  const count = options.streams ?? STREAMS;
  if (!Number.isInteger(count) || count < 1 || count > MAX_STREAMS) throw new RangeError(`streams must be a whole number from 1 to ${String(MAX_STREAMS)}, got ${String(count)}`);
  const { direction, profile } = options;
  const stops = new DirectionStops(options.signal);
  const cap = Math.min(options.maxBytes, MAX_UPLOAD_BYTES);
  if (direction === 'upload') transport.prepareUploads(cap);
  const began = performance.now();
  const counter = new ByteCounter(began);
  const roundTrips: RoundTrip[] = [];
  const stream = (i: number) => (direction === 'download' ? downloadStream(transport, options.maxBytes, counter, stops.stop.signal) : uploadStream(transport, i, cap, counter, stops));
  const streams = Array.from({ length: count }, (_, i) => stops.guarded(stream(i)));
  const probes = pacedRoundTrips(transport, direction, probeGapMs(profile), began, roundTrips, stops);
  const sampler = setInterval(() => {
    counter.record();
  }, SAMPLE_MS);
  const endMs = await directionEnd(counter, roundTrips, began, options, stops.stop.signal);
  clearInterval(sampler);
  stops.starting.abort();
  if (direction === 'upload') await uploadsAnswered(streams, counter, endMs, options, stops.stop.signal);
  counter.close();
  stops.abortAll();
  await Promise.all([...streams, probes]);
  stops.finish();
  return { direction, streams: count, progress: counter.progress, roundTrips, endMs, measure: measureDirection(counter.progress, roundTrips, endMs, profile) };
}

/**
 * `count` round trips on the quiet link, one after another IDLE_GAP_MS apart, timed as those
 * under load are, so the latency the load adds compares like with like (the bufferbloat grade is
 * a difference of the two, and both must be one method's). Rejects with the first failure, or
 * LoadCancelled.
 */
export async function idleRoundTrips(transport: LoadTransport, count: number, signal: AbortSignal): Promise<number[]> {
  const trips: RoundTrip[] = [];
  const began = performance.now();
  try {
    for (let n = 0; !signal.aborted && n < count; n++) {
      await timedRoundTrip(transport, 'idle', n, began, trips, signal);
      await pause(IDLE_GAP_MS, signal);
    }
  } catch (err: unknown) {
    if (!signal.aborted) throw err;
  }
  if (signal.aborted) throw new LoadCancelled();
  return trips.map((r) => r.ms);
}
