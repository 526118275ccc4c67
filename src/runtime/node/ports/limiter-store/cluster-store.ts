import type { SharedStore } from '../../../../core/ratelimit/fallback-store.js';
import type { MemoryLimiterStore } from '../../../../core/ratelimit/memory-store.js';
import type { WindowHit } from '../../../../core/ports/limiter-store.js';
import type { Clock } from '../../../../core/ports/clock.js';

/** An IPC channel: a cluster worker's `process`, or the primary's `Worker` / `ChildProcess`. */
export interface Channel {
  send(message: unknown, callback?: (err: Error | null) => void): unknown;
  on(event: 'message', listener: (message: unknown) => void): unknown;
}

const TAG = 'netdiag:limiter';

/**
 * The hits of one turn of the worker's event loop, flat: id, key, window length, for each. One
 * message carries them all, and one reply answers them (issue 54: a message each way per hit cost
 * two workers more CPU than one process saved).
 */
interface HitBatch {
  tag: typeof TAG;
  now: number;
  hits: (number | string)[];
}

/** Flat too: id, count, window reset, for each hit of the batch, in its order. */
interface BatchReply {
  tag: typeof TAG;
  replies: number[];
}

interface Waiting {
  resolve: (hit: WindowHit) => void;
  reject: (err: Error) => void;
}

const isTagged = (m: unknown): m is { tag: string } =>
  typeof m === 'object' && m !== null && (m as { tag?: unknown }).tag === TAG;

/**
 * A worker's view of the counters its cluster's primary holds, so N workers on one port grant the
 * limit once, not N times. The hits asked for in one turn of the event loop (every request read
 * in one poll) go as one IPC message, sent from `setImmediate`, and come back as one reply. Time
 * is the worker's.
 */
export class ClusterLimiterStore implements SharedStore {
  readonly name = 'cluster primary';
  #next = 0;
  readonly #pending = new Map<number, Waiting>();
  #batch: (number | string)[] = [];

  constructor(
    private readonly channel: Channel,
    private readonly clock: Clock,
  ) {
    channel.on('message', (message) => {
      if (!isTagged(message)) return;
      const { replies } = message as BatchReply;
      for (let i = 0; i + 2 < replies.length; i += 3) {
        const id = replies[i] as number;
        const waiting = this.#pending.get(id);
        this.#pending.delete(id);
        waiting?.resolve({ count: replies[i + 1] as number, resetAt: replies[i + 2] as number });
      }
    });
  }

  hit(key: string, windowMs: number): Promise<WindowHit> {
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      if (this.#batch.length === 0) setImmediate(() => { this.#flush(); });
      this.#batch.push(id, key, windowMs);
    });
  }

  #flush(): void {
    const hits = this.#batch;
    this.#batch = [];
    const failed = (err: unknown) => {
      const error = err instanceof Error ? err : new Error(String(err));
      for (let i = 0; i < hits.length; i += 3) {
        const id = hits[i] as number;
        this.#pending.get(id)?.reject(error);
        this.#pending.delete(id);
      }
    };
    const batch: HitBatch = { tag: TAG, now: this.clock.now(), hits };
    try {
      this.channel.send(batch, (err) => {
        if (err !== null) failed(err);
      });
    } catch (err) {
      failed(err);
    }
  }

  /** The primary answers every hit it gets; a hit on a key no request uses stands in for a ping. */
  async ping(): Promise<void> {
    await this.hit('ping', 1);
  }
}

/** The primary's side: answers each worker's batch of hits from one in-process store, in one reply. */
export function answerLimiterRequests(channel: Channel, store: MemoryLimiterStore): void {
  channel.on('message', (message) => {
    if (!isTagged(message)) return;
    const { now, hits } = message as unknown as HitBatch;
    const replies: number[] = [];
    for (let i = 0; i + 2 < hits.length; i += 3) {
      const { count, resetAt } = store.hitAt(hits[i + 1] as string, hits[i + 2] as number, now);
      replies.push(hits[i] as number, count, resetAt);
    }
    const reply: BatchReply = { tag: TAG, replies };
    // The worker may have died since it asked: with a callback, a send over the closed channel
    // (ERR_IPC_CHANNEL_CLOSED, EPIPE) is reported to it instead of thrown as an 'error' event
    // that would take the primary, and every worker with it, down. Nobody is left to answer.
    try {
      channel.send(reply, () => undefined);
    } catch {
      // A channel that throws synchronously is gone just the same.
    }
  });
}
