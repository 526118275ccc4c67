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

interface HitRequest {
  tag: typeof TAG;
  id: number;
  key: string;
  windowMs: number;
  now: number;
}

interface HitReply {
  tag: typeof TAG;
  id: number;
  count: number;
  resetAt: number;
}

const isTagged = (m: unknown): m is { tag: string; id: number } =>
  typeof m === 'object' && m !== null && (m as { tag?: unknown }).tag === TAG;

/**
 * A worker's view of the counters its cluster's primary holds: one IPC message each way per
 * hit, so N workers on one port grant the limit once, not N times. Time is the worker's.
 */
export class ClusterLimiterStore implements SharedStore {
  readonly name = 'cluster primary';
  #next = 0;
  readonly #pending = new Map<number, (hit: WindowHit) => void>();

  constructor(
    private readonly channel: Channel,
    private readonly clock: Clock,
  ) {
    channel.on('message', (message) => {
      if (!isTagged(message)) return;
      const reply = message as HitReply;
      const resolve = this.#pending.get(reply.id);
      this.#pending.delete(reply.id);
      resolve?.({ count: reply.count, resetAt: reply.resetAt });
    });
  }

  hit(key: string, windowMs: number): Promise<WindowHit> {
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, resolve);
      const request: HitRequest = { tag: TAG, id, key, windowMs, now: this.clock.now() };
      const failed = (err: unknown) => {
        this.#pending.delete(id);
        reject(err instanceof Error ? err : new Error(String(err)));
      };
      try {
        this.channel.send(request, (err) => {
          if (err !== null) failed(err);
        });
      } catch (err) {
        failed(err);
      }
    });
  }

  /** The primary answers every hit it gets; a hit on a key no request uses stands in for a ping. */
  async ping(): Promise<void> {
    await this.hit('ping', 1);
  }
}

/** The primary's side: answers each worker's hits from one in-process store. */
export function answerLimiterRequests(channel: Channel, store: MemoryLimiterStore): void {
  channel.on('message', (message) => {
    if (!isTagged(message)) return;
    const { id, key, windowMs, now } = message as unknown as HitRequest;
    const { count, resetAt } = store.hitAt(key, windowMs, now);
    const reply: HitReply = { tag: TAG, id, count, resetAt };
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
