import { failureReason } from '../../core/failure-reason.js';
import { DeferredTimer } from '../../core/deferred-timer.js';
import type { Clock, Defer } from '../../core/ports/clock.js';
import { Deque } from './deque.js';
import type { EventSink, ReceivedEvent } from '../../core/ports/event-sink.js';
import type { Logger } from '../../core/ports/logger.js';

/** Drop warnings are rate-limited so that an overload cannot flood the log. */
const DROP_LOG_INTERVAL_MS = 60_000;
/** Events per POST. */
const BATCH_SIZE = 500;
/** How long a batch that is not full waits for more events. */
const LINGER_MS = 200;
/** Deadline of one POST, response included. */
const TIMEOUT_MS = 2_000;
/** First retry delay; doubled per failure up to the sink's `maxBackoffMs`. */
const BACKOFF_MS = 500;

/**
 * One POST of a batch to the collector: resolves with the response's status once its body is
 * consumed, rejects when the network fails or the deadline passes (a `TimeoutError`).
 */
export type BatchPoster = (url: string, headers: Readonly<Record<string, string>>, body: string, timeoutMs: number) => Promise<number>;

/** The portable poster, `fetch`: what Workers use, and any runtime without a cheaper client. */
const fetchPoster: BatchPoster = async (url, headers, body, timeoutMs) => {
  const res = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(timeoutMs) });
  await res.body?.cancel();
  return res.status;
};

interface HttpSinkOptions {
  url: string;
  /** An `Authorization` header value for the collector (never logged). */
  authorization?: string | undefined;
  /** Most events held while the collector is slow or down; the oldest go first past it. */
  queueSize: number;
  logger: Logger;
  /** Longest retry delay (30 s unless set). */
  maxBackoffMs?: number;
  /** Keeps a scheduled batch alive past the response that queued it (Workers' waitUntil). */
  defer?: Defer;
  /** Wall-clock time: the shutdown deadline, the once-a-minute drop warning, a dropped timer. */
  clock: Clock;
  /** How a batch is sent; `fetchPoster` unless the runtime has a cheaper client. */
  post?: BatchPoster;
}

/**
 * Batches events as NDJSON POSTs to an operator's collector. The queue is bounded: when the
 * collector is slow or down, the oldest events are dropped and counted, so memory stays flat
 * and the intake never waits. One POST is in flight at a time, with a short deadline; a failed
 * batch goes back to the head of the queue and is retried with exponential backoff. A state
 * change (collector failing, collector back) is logged once, with the drops so far, and drops at
 * most once a minute with their count, never per event or per batch. Uses only `fetch` and a
 * deferred timer, so it runs on any runtime: on Workers the request whose event starts a batch
 * keeps its POST alive through `waitUntil`, and a retry the platform dropped is scheduled again
 * by the next event.
 */
export class HttpEventSink implements EventSink {
  readonly #url: string;
  readonly #headers: Record<string, string>;
  readonly #queueSize: number;
  readonly #logger: Logger;
  readonly #maxBackoffMs: number;
  readonly #send: BatchPoster;
  /**
   * Each event as its NDJSON line, serialised once as it is accepted: a line holds a third of
   * what the parsed event's objects did (a full queue of 10 000 held about 11 MB of heap as
   * objects), and a batch sent again after a failure is not serialised again.
   */
  readonly #queue = new Deque<string>();
  #inFlight: Promise<boolean> | undefined;
  readonly #timer: DeferredTimer;
  readonly #clock: Clock;
  #failures = 0;
  #dropped = 0;
  /** Monotonic totals for metrics: events delivered, and events lost to the queue bound. */
  #deliveredTotal = 0;
  #lostTotal = 0;
  #closing = false;
  /** When drops were last logged: at most one warning a minute, however long an overload lasts. */
  #dropLoggedAt = -Infinity;
  #droppedAtLog = 0;

  constructor(options: HttpSinkOptions) {
    this.#url = options.url;
    this.#headers = { 'Content-Type': 'application/x-ndjson' };
    if (options.authorization !== undefined) this.#headers.Authorization = options.authorization;
    this.#queueSize = options.queueSize;
    this.#logger = options.logger;
    this.#maxBackoffMs = options.maxBackoffMs ?? 30_000;
    this.#clock = options.clock;
    this.#timer = new DeferredTimer(options.defer ?? (() => undefined), options.clock);
    this.#send = options.post ?? fetchPoster;
  }

  /** Events waiting for the collector now. */
  get depth(): number {
    return this.#queue.length;
  }

  /** Events the collector has accepted (2xx) since start. */
  get delivered(): number {
    return this.#deliveredTotal;
  }

  /**
   * Events dropped at the queue bound since start, never to be delivered. A drop that takes an
   * event of the batch in flight counts once that batch is known to have failed; if it is
   * delivered after all, the event counts as delivered, so the total only ever grows.
   */
  get dropped(): number {
    return this.#lostTotal;
  }

  accept(event: ReceivedEvent): void {
    this.#queue.push(JSON.stringify(event));
    this.#trim();
    if (this.#closing || this.#inFlight !== undefined) return;
    if (this.#timer.lost()) this.#schedule(0);
    else if (this.#failures > 0) return;
    else if (this.#queue.length >= BATCH_SIZE) {
      // A full batch is sent at the next timer turn; the events accepted before that turn leave
      // the timer as it is. Started again for each of them, it cost a timer and a promise an event
      // (`timers.insert` in a perf profile of the intake).
      if (!this.#timer.dueBy(this.#clock.now())) this.#schedule(0);
    } else if (!this.#timer.pending) this.#schedule(LINGER_MS);
  }

  async close(graceMs: number): Promise<void> {
    this.#closing = true;
    this.#timer.cancel();
    const deadline = this.#clock.now() + graceMs;
    if (this.#inFlight !== undefined) await this.#inFlight;
    // A final flush: batch after batch until the queue is empty, a POST fails, or time is up.
    while (this.#queue.length > 0 && this.#clock.now() < deadline) {
      if (!(await this.#post(Math.min(TIMEOUT_MS, deadline - this.#clock.now())))) break;
    }
    if (this.#queue.length > 0 || this.#dropped > 0) {
      this.#logger.warn({ undelivered: this.#queue.length, dropped: this.#dropped }, 'analytics events not delivered at shutdown');
    }
  }

  #trim(): void {
    const over = this.#queue.length - this.#queueSize;
    if (over <= 0) return;
    this.#queue.drop(over);
    this.#dropped += over;
    // With a batch in flight the drop may have taken its events; that is settled when it ends.
    if (this.#inFlight === undefined) this.#lostTotal = Math.max(this.#lostTotal, this.#dropped);
    const now = this.#clock.now();
    if (now - this.#dropLoggedAt >= DROP_LOG_INTERVAL_MS) {
      // `dropped` is the count since the last of these lines (the first one: this drop).
      this.#logger.warn({ queue_size: this.#queueSize, dropped: Math.max(0, this.#dropped - this.#droppedAtLog) }, 'analytics queue full: dropping the oldest events');
      this.#dropLoggedAt = now;
      this.#droppedAtLog = this.#dropped;
    }
  }

  #schedule(ms: number): void {
    // After close() only the final flush delivers.
    if (this.#closing) return;
    this.#timer.start(ms, () => this.#flush());
  }

  /** Read through a call: TypeScript keeps a field narrowed across `await`, close() does not. */
  #isClosing(): boolean {
    return this.#closing;
  }

  async #flush(): Promise<void> {
    if (this.#closing || this.#inFlight !== undefined || this.#queue.length === 0) return;
    let ok = await this.#post(TIMEOUT_MS);
    // While a full batch waits, the next POST goes at once, not through a timer: on a busy event
    // loop a zero timer waits behind the I/O of every request being served, and that gap (17 ms
    // against a 7 ms POST at 23 000 events/s) made the queue overflow with a collector that kept up.
    while (ok && !this.#isClosing() && this.#queue.length >= BATCH_SIZE) ok = await this.#post(TIMEOUT_MS);
    // close() may have begun during a POST; from then on only its final flush delivers.
    if (this.#isClosing()) return;
    if (!ok) {
      const delay = Math.min(this.#maxBackoffMs, BACKOFF_MS * 2 ** (this.#failures - 1));
      // Jitter keeps many instances from retrying in step against a recovering collector.
      this.#schedule(delay / 2 + Math.random() * (delay / 2));
    } else if (this.#queue.length >= BATCH_SIZE) {
      this.#schedule(0);
    } else if (this.#queue.length > 0) {
      this.#schedule(LINGER_MS);
    }
  }

  /** One POST of the head of the queue; the batch leaves the queue only once delivered. */
  #post(timeoutMs: number): Promise<boolean> {
    const batch = this.#queue.peek(BATCH_SIZE);
    // One flat string: `${batch.join('\n')}\n` made a second string of the whole batch (a
    // concatenation that each later reader flattens into another 125 KB copy; docs/benchmarks.md,
    // "The batch's copies").
    const body = batch.concat('').join('\n');
    const droppedBefore = this.#dropped;
    this.#inFlight = (async () => {
      try {
        const status = await this.#send(this.#url, this.#headers, body, timeoutMs);
        if (status < 200 || status > 299) throw Object.assign(new Error('collector refused'), { code: `status_${String(status)}` });
        // The batch was the head of the queue; drops since then came off that head, so they
        // were batch events after all (delivered, not lost), and the rest of it is still first.
        const trimmed = Math.min(batch.length, this.#dropped - droppedBefore);
        this.#dropped -= trimmed;
        this.#queue.drop(batch.length - trimmed);
        this.#deliveredTotal += batch.length;
        this.#lostTotal = Math.max(this.#lostTotal, this.#dropped);
        if (this.#failures > 0) this.#logger.info({ dropped: this.#dropped }, 'analytics collector reachable again');
        this.#failures = 0;
        return true;
      } catch (err) {
        if (this.#failures === 0) {
          // The class of failure, never the collector's text: our `status_503`, `ECONNREFUSED`,
          // or `TimeoutError` (a DOMException whose numeric `code` is not a class).
          this.#logger.warn({ reason: failureReason(err) }, 'analytics collector failing; events are queued');
        }
        this.#failures += 1;
        this.#lostTotal = Math.max(this.#lostTotal, this.#dropped);
        return false;
      } finally {
        this.#inFlight = undefined;
      }
    })();
    return this.#inFlight;
  }
}
