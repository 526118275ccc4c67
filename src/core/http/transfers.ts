// What one source may hold of the speed-test and responsiveness transfers: the rate limits count
// requests, and a request here can hold a connection and gigabytes (`/nq/large` is 8 GiB).
// So: at most `atOnce` transfers open at once, and new ones only while the source has moved under
// `bytesPerMinute` in the current minute; past either, a 429 problem that says which. A transfer
// begun within the budget runs to its own end. Both are sized so that an honest test never meets
// them (docs/api.md, "Rate limits"). Kept in this instance's memory, by the rate limit's keyed
// hash of the source (never the address), like the in-process limiter.
import type { Clock } from '../ports/clock.js';
import { WINDOW_MS } from '../ratelimit/limits.js';
import { problemReply } from './respond.js';
import type { HttpReply, RequestContext, StreamedBody } from './types.js';

export interface TransferLimits {
  /** Transfers one source may have open at once. */
  atOnce: number;
  /** Bytes one source may move in a minute before new transfers are refused. */
  bytesPerMinute: number;
}

/**
 * `netdiag rpm` and networkQuality-style clients open up to 16 load connections a direction, the
 * page and `netdiag speedtest` four streams; 32 leaves two honest tests at once from one address
 * room. A test at 10 Gbit/s moves at most about 25 GB a direction in its 20 s; 100 GB a minute
 * is two such directions twice over.
 */
export const DEFAULT_TRANSFER_LIMITS: TransferLimits = { atOnce: 32, bytesPerMinute: 100_000_000_000 };

/** One source's open transfers and the bytes it moved in the minute that began at `window`. */
interface Holding {
  open: number;
  window: number;
  bytes: number;
}

/** A transfer under way: what it moved, and its end. */
export interface Transfer {
  moved: (bytes: number) => void;
  /** Lets go of its place; a second call does nothing. */
  end: () => void;
}

export class TransferLedger {
  readonly #bySource = new Map<string, Holding>();
  #swept = 0;

  constructor(
    readonly limits: TransferLimits,
    private readonly clock: Clock,
  ) {}

  /** How many sources hold something now (for tests and metrics). */
  get sources(): number {
    return this.#bySource.size;
  }

  /** A transfer begins for the request's source: its handle, or the 429 that refuses it. */
  begin(ctx: RequestContext): Transfer | HttpReply {
    const now = this.clock.now();
    const window = now - (now % WINDOW_MS);
    this.#sweep(window);
    const key = ctx.sourceKey ?? 'unknown';
    let holding = this.#bySource.get(key);
    if (holding === undefined) this.#bySource.set(key, (holding = { open: 0, window, bytes: 0 }));
    else if (holding.window !== window) Object.assign(holding, { window, bytes: 0 });
    if (holding.open >= this.limits.atOnce) {
      return refusal(ctx, this.limits.atOnce, '1', `This source has ${String(holding.open)} speed-test and responsiveness transfers open on this server, the most it allows at once; retry when one has ended.`);
    }
    if (holding.bytes >= this.limits.bytesPerMinute) {
      const reset = String(Math.max(1, Math.ceil((window + WINDOW_MS - now) / 1000)));
      return refusal(ctx, this.limits.bytesPerMinute, reset, `This source has moved ${String(holding.bytes)} bytes through the speed-test and responsiveness transfers in this minute, more than the ${String(this.limits.bytesPerMinute)} it allows; retry after ${reset} s.`);
    }
    holding.open += 1;
    const held = holding;
    let ended = false;
    return {
      moved: (bytes) => {
        held.bytes += bytes;
      },
      end: () => {
        if (ended) return;
        ended = true;
        held.open -= 1;
      },
    };
  }

  /** Once a minute at most: drops sources that hold nothing open and moved nothing this minute. */
  #sweep(window: number): void {
    if (window === this.#swept) return;
    this.#swept = window;
    for (const [key, holding] of this.#bySource) if (holding.open === 0 && holding.window !== window) this.#bySource.delete(key);
  }
}

/**
 * The 429 of a transfer bound: its RateLimit-* headers report the bound that refused it, not the
 * request window's, so Retry-After equals RateLimit-Reset as on every 429 of the API.
 */
function refusal(ctx: RequestContext, limit: number, reset: string, detail: string): HttpReply {
  ctx.rate = { limit: String(limit), remaining: '0', reset };
  return problemReply(ctx, 'rate_limit_exceeded', detail, { 'Retry-After': reset });
}

/** Whether `begin` refused: its answer is a reply, not a transfer. */
export const isRefusal = (t: Transfer | HttpReply): t is HttpReply => 'status' in t;

/** `body` with each chunk counted to `transfer`, which ends when the runtime says the body is over. */
export function counted(body: StreamedBody, transfer: Transfer): StreamedBody {
  return {
    length: body.length,
    ...(body.oneChunkQueued === true ? { oneChunkQueued: true } : {}),
    *chunks() {
      const inner = body.chunks();
      for (let next = inner.next(); next.done !== true; next = inner.next()) {
        transfer.moved(next.value.byteLength);
        yield next.value;
      }
    },
    done: () => {
      body.done?.();
      transfer.end();
    },
  };
}
