// The speed test's load, as the page runs it after the engine's idle latency (and packet loss):
// one direction at a time kept busy by parallel streams with no pause between their transfers
// (a pause lets a shaper's token bucket refill, and the link then reads faster than it is), the
// bytes counted as they move, round trips timed beside the load on a connection of their own, and
// the direction ended by the rules the command line shares (src/common/speedtest/working.ts).
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
  bodyTiming,
  SAMPLE_MS,
  STREAMS,
  UPLOAD_ANSWER_GRACE_MS,
  type DirectionMeasure,
  type LoadProfile,
  type Progress,
  type Received,
  type RoundTrip,
} from '../../src/common/speedtest/working.js';
import { settledWithin } from '../../src/common/settled-within.js';
import { retryAfterSeconds } from '../../src/common/rate-limit.js';
import { problemText, type ProblemDoc } from '../ui/dom.js';

export type Direction = 'download' | 'upload';

/** The pause between idle round trips, ms: they are sent one after another, as the engine's were. */
const IDLE_GAP_MS = 10;
/** A direction as it ran: what it counted and timed, when it ended, and what the rules read of it. */
export interface LoadRun {
  direction: Direction;
  streams: number;
  progress: Progress[];
  roundTrips: RoundTrip[];
  /** When the direction was stopped, ms since it began: what measureDirection was given. */
  endMs: number;
  measure: DirectionMeasure;
}

/** Why a direction failed, in the page's failure reasons (a problem answered, or the network). */
export class LoadError extends Error {
  constructor(
    message: string,
    readonly reason: 'engine_error' | 'network_error',
  ) {
    super(message);
  }
}

export interface LoadOptions {
  direction: Direction;
  /** The configuration's limits.max_bytes_per_request: a download asks for this much at once. */
  maxBytes: number;
  profile: LoadProfile;
  /** Cancels the direction: every request is aborted and the run rejects. */
  signal: AbortSignal;
  /**
   * The counts so far, at each check (the live view and the stall check read them), and after an
   * upload direction's end, until its uploads in flight are answered, those counts cut at the end.
   */
  onProgress: (progress: readonly Progress[]) => void;
}

/**
 * The bytes of all of a direction's streams in one counter. A download's chunks are recorded at
 * most every SAMPLE_MS, each record at the time of the last chunk it holds, so a pause in
 * the data is never spread over the time before it; an upload is placed in the time it arrived once it is answered.
 */
class Counter {
  progress: Progress[] = [];
  private readonly uploads: Received[] = [];
  private total = 0;
  private lastAt = 0;
  private closed = false;

  constructor(private readonly began: number) {}

  add(bytes: number, now: number): void {
    if (this.closed) return;
    this.total += bytes;
    this.lastAt = now - this.began;
  }

  record(): void {
    const last = this.progress.at(-1);
    if (this.uploads.length === 0 && this.total > 0 && last?.bytes !== this.total) this.progress.push({ atMs: this.lastAt, bytes: this.total });
  }

  /**
   * An upload the server answered: its bytes placed in the time they arrived (receivedUpload),
   * from the server's `Server-Timing` or, without it, from when it was sent.
   */
  received(stream: number, bytes: number, sentAt: number, answeredAt: number, body: ReturnType<typeof bodyTiming>): void {
    if (this.closed) return;
    this.uploads.push(receivedUpload(stream, bytes, sentAt - this.began, answeredAt - this.began, body));
    this.progress = receivedProgress(this.uploads);
  }

  /** The last record, then nothing more: requests still finishing after the stop are not counted. */
  close(): void {
    this.record();
    this.closed = true;
  }
}

/** A request the server's rate limit refused (429), with the wait it asked for (src/common/rate-limit.ts). */
export class RateLimited extends LoadError {
  constructor(
    message: string,
    readonly retryAfterS: number | undefined,
  ) {
    super(message, 'engine_error');
  }
}

/** Throws the answer's problem when it is one (a 4xx or 5xx with its problem document; a 429 as RateLimited). */
async function checked(res: Response): Promise<Response> {
  if (res.ok) return res;
  let problem: ProblemDoc = { status: res.status, title: res.statusText };
  try {
    problem = { ...problem, ...((await res.json()) as ProblemDoc) };
  } catch {
    // No problem document: the status alone says it.
  }
  const message = `${String(res.status)}: ${problemText(problem)}`;
  throw res.status === 429 ? new RateLimited(message, retryAfterSeconds(res.headers.get('Retry-After'))) : new LoadError(message, 'engine_error');
}

async function downloadStream(url: string, counter: Counter, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    const res = await checked(await fetch(url, { cache: 'no-store', signal }));
    const reader = res.body?.getReader();
    if (reader === undefined) continue;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      counter.add(value.byteLength, performance.now());
    }
  }
}

/** Uploads one after another until `starting` is aborted; each in flight ends with its answer or `signal`. */
async function uploadStream(stream: number, zeros: Blob, counter: Counter, starting: AbortSignal, signal: AbortSignal): Promise<void> {
  let bytes = Math.min(FIRST_UPLOAD_BYTES, zeros.size);
  while (!starting.aborted) {
    const started = performance.now();
    const res = await checked(await fetch('/__up', { method: 'POST', body: zeros.slice(0, bytes), cache: 'no-store', signal }));
    await res.arrayBuffer();
    const now = performance.now();
    counter.received(stream, bytes, started, now, bodyTiming(res.headers.get('Server-Timing')));
    bytes = nextUploadBytes(bytes, now - started, zeros.size);
  }
}

/** The server's own time for a request, from its Server-Timing (the engine's `cfRequestDuration`), ms. */
function serverMs(entry: PerformanceResourceTiming): number {
  return entry.serverTiming.find((s) => s.name === 'cfRequestDuration')?.duration ?? 0;
}

/**
 * A round trip's time from Resource Timing: request sent to first byte of the answer, less the
 * server's own time; undefined when the browser has no entry for it (or no timing in it).
 */
function timedByBrowser(url: string): number | undefined {
  const entry = performance.getEntriesByName(url, 'resource').at(-1) as PerformanceResourceTiming | undefined;
  if (entry === undefined || entry.requestStart <= 0 || entry.responseStart < entry.requestStart) return undefined;
  return Math.max(0, entry.responseStart - entry.requestStart - serverMs(entry));
}

const pause = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });

/** The entry is queued as the answer ends: when it is not there yet, one turn of the event loop brings it. */
async function timedNextTurn(url: string, signal: AbortSignal): Promise<number | undefined> {
  await pause(0, signal);
  return timedByBrowser(url);
}

/** One round trip: an empty download, timed by Resource Timing (by the clock around the fetch only when the browser has no entry for it). */
async function probe(during: Direction | 'idle', n: number, began: number, roundTrips: RoundTrip[], signal: AbortSignal): Promise<void> {
  const url = new URL(`/__down?bytes=0&during=${during}&n=${String(n)}`, location.href).href;
  const sent = performance.now();
  const res = await checked(await fetch(url, { cache: 'no-store', signal }));
  await res.arrayBuffer();
  const clock = performance.now() - sent;
  // Answered in full, it counts even when the direction stopped meanwhile (measured after this settles).
  const ms = timedByBrowser(url) ?? (await timedNextTurn(url, signal)) ?? clock;
  roundTrips.push({ atMs: sent - began, ms });
}

/** `count` round trips one after another, `gapMs` apart (the idle ones). */
async function probeLoop(during: Direction | 'idle', began: number, gapMs: number, roundTrips: RoundTrip[], signal: AbortSignal, count: number): Promise<void> {
  for (let n = 0; !signal.aborted && n < count; n++) {
    await probe(during, n, began, roundTrips, signal);
    await pause(gapMs, signal);
  }
}

/**
 * Round trips beside the load until `starting` is aborted: one started every `gapMs` while fewer
 * than PROBES_IN_FLIGHT are waiting for their answers (or for `signal`), each settled through `guarded`.
 */
async function pacedProbes(during: Direction, began: number, gapMs: number, roundTrips: RoundTrip[], starting: AbortSignal, signal: AbortSignal, guarded: (run: Promise<void>) => Promise<void>): Promise<void> {
  const inFlight = new Set<Promise<void>>();
  for (let n = 0; !starting.aborted; n++) {
    if (inFlight.size < PROBES_IN_FLIGHT) {
      const one: Promise<void> = guarded(probe(during, n, began, roundTrips, signal)).finally(() => inFlight.delete(one));
      inFlight.add(one);
    }
    await pause(gapMs, starting);
  }
  await Promise.all(inFlight);
}

/**
 * The idle round trips: `count` empty downloads one after another on the quiet link, timed as
 * the round trips under load are (probeLoop), so the latency the load adds compares like with
 * like. The engine's own idle figure comes from its own requests and read 6 ms over loopback
 * where these read 2: the bufferbloat grade is a difference of the two, and both must be one method's.
 */
export async function idleRoundTrips(count: number, signal: AbortSignal): Promise<number[]> {
  const trips: RoundTrip[] = [];
  const stop = new AbortController();
  const cancel = () => {
    stop.abort();
  };
  signal.addEventListener('abort', cancel);
  const began = performance.now();
  try {
    await probeLoop('idle', began, IDLE_GAP_MS, trips, stop.signal, count);
  } catch (err: unknown) {
    const failure = failureOf(err, stop.signal);
    if (failure !== undefined) throw failure;
  } finally {
    signal.removeEventListener('abort', cancel);
    performance.clearResourceTimings();
  }
  if (signal.aborted) throw new DOMException('The test was cancelled.', 'AbortError');
  return trips.map((r) => r.ms);
}

/** What a failed request says, or undefined for an abort (the direction's own stop, or a cancel). */
function failureOf(err: unknown, signal: AbortSignal): LoadError | undefined {
  if (signal.aborted) return undefined;
  if (err instanceof LoadError) return err;
  return new LoadError(err instanceof Error ? err.message : String(err), 'network_error');
}

/** Runs one direction until the rules say it has measured enough (or it fails, or is cancelled). */
export async function runDirection(options: LoadOptions): Promise<LoadRun> {
  const { direction, profile } = options;
  const stop = new AbortController();
  // Aborted when the direction ends: nothing more is started; what is in flight goes on until `stop`.
  const starting = new AbortController();
  const cancel = () => {
    starting.abort();
    stop.abort();
  };
  options.signal.addEventListener('abort', cancel);
  // Room for every entry of a test (the engine asks the same when it starts); cleared at the end
  // of each direction, once every request of it has settled, never while one may still be read.
  performance.setResourceTimingBufferSize(10_000);
  // One body of zeros for every upload, sliced (a Blob slice shares its bytes). Made before the
  // direction's clock starts: with it inside, Chromium on a two-core machine counted the first
  // upload bytes 0.87-0.97 s into the direction, 0.39-0.41 s with it outside; time the
  // direction's budget spent sending nothing (the unshaped link matrix's page runs,
  // test/timed/link-matrix.test.ts).
  const zeros = direction === 'upload' ? new Blob([new Uint8Array(Math.min(options.maxBytes, MAX_UPLOAD_BYTES))]) : undefined;
  const began = performance.now();
  const counter = new Counter(began);
  const roundTrips: RoundTrip[] = [];
  let failure: LoadError | undefined;
  const guarded = (run: Promise<void>) =>
    run.catch((err: unknown) => {
      // After the direction's end, an upload given its grace that fails (a server's body deadline
      // may end one a stall held back, 408) is only not counted (UPLOAD_ANSWER_GRACE_MS).
      failure ??= failureOf(err, starting.signal);
      starting.abort();
      stop.abort();
    });
  const url = `/__down?bytes=${String(options.maxBytes)}`;
  const running = Array.from({ length: STREAMS }, (_, i) => guarded(zeros === undefined ? downloadStream(url, counter, stop.signal) : uploadStream(i, zeros, counter, starting.signal, stop.signal)));
  const probes = pacedProbes(direction, began, probeGapMs(profile), roundTrips, starting.signal, stop.signal, guarded);
  const sampler = setInterval(() => {
    counter.record();
  }, SAMPLE_MS);
  const endMs = await new Promise<number>((resolve) => {
    const check = setInterval(() => {
      const now = performance.now() - began;
      options.onProgress(counter.progress);
      if (stop.signal.aborted || directionDone(counter.progress, roundTrips, now, profile)) {
        clearInterval(check);
        resolve(now);
      }
    }, CHECK_MS);
  });
  clearInterval(sampler);
  starting.abort();
  // The uploads in flight are answered (or given up) first, so their bytes up to the end count,
  // and the live view follows the counts there, cut at the end as the figure reads them
  // (countsUntil): it lands on the figure. Round trips still out are not waited for (one lost
  // again and again may take seconds).
  if (direction === 'upload') {
    const report = () => {
      options.onProgress(countsUntil(counter.progress, endMs));
    };
    const reporting = setInterval(report, CHECK_MS);
    await settledWithin(Promise.all(running), UPLOAD_ANSWER_GRACE_MS, stop.signal);
    clearInterval(reporting);
    report();
  }
  counter.close();
  stop.abort();
  options.signal.removeEventListener('abort', cancel);
  await Promise.all([...running, probes]);
  performance.clearResourceTimings();
  if (options.signal.aborted) throw new DOMException('The test was cancelled.', 'AbortError');
  if (failure !== undefined) throw failure;
  return { direction, streams: STREAMS, progress: counter.progress, roundTrips, endMs, measure: measureDirection(counter.progress, roundTrips, endMs, profile) };
}
