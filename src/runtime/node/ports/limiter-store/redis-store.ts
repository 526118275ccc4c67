import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';
import type { SharedStore } from '../../../../core/ratelimit/fallback-store.js';
import type { WindowHit } from '../../../../core/ports/limiter-store.js';
import type { Clock } from '../../../../core/ports/clock.js';
import { failureReason } from '../../../../core/failure-reason.js';

/**
 * One fixed window per key, counted atomically in one round trip. Time is Redis's own (TIME),
 * so every instance of a deployment reads one clock: an instance whose clock runs ahead can
 * neither end windows early for the others nor make them report a reset over 60 s. The script
 * returns the milliseconds left in the window, which the caller adds to its own clock, so
 * `RateLimit-Reset` is right whatever its skew. ARGV[1] overrides the time only for the
 * conformance suite, whose manual clock must drive every store alike.
 */
const HIT_SCRIPT = `
local now
if ARGV[1] == '' then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
else
  now = tonumber(ARGV[1])
end
local window = tonumber(ARGV[2])
local reset = tonumber(redis.call('HGET', KEYS[1], 'r'))
if reset == nil or now >= reset then
  reset = now + window
  redis.call('HSET', KEYS[1], 'c', 1, 'r', reset)
  redis.call('PEXPIRE', KEYS[1], window)
  return {1, window}
end
return {redis.call('HINCRBY', KEYS[1], 'c', 1), reset - now}
`;

interface HitCommand {
  netdiagHit(key: string, now: string, windowMs: number): Promise<[number, number]>;
}

const REDIS_KEY_PREFIX = 'netdiag:rl:';

/**
 * ioredis, loaded when a store is made rather than when this module is: every process imports
 * the limiter, few deployments name Redis, and ioredis with its dependencies (55 modules) held
 * 1.85 MB of heap in each process and worker thread that never spoke to it. It is
 * CommonJS, so `require` keeps the store's construction synchronous.
 */
function redisClass(): typeof Redis {
  return (createRequire(import.meta.url)('ioredis') as { Redis: typeof Redis }).Redis;
}

/**
 * What went wrong with Redis, named for the operator: a socket error's code (`ECONNREFUSED`,
 * `ECONNRESET` for TLS spoken to a plain port), a TLS error's code, or the first word of a Redis
 * error reply (`WRONGPASS`, `NOAUTH`, `NOPERM`).
 */
function redisReason(err: unknown): string {
  const { name, message } = (err ?? {}) as { name?: unknown; message?: unknown };
  // A Redis error reply's class is its first word; its message is the server's own text.
  if (name === 'ReplyError' && typeof message === 'string') return /^[A-Z]+/.exec(message)?.[0] ?? 'ReplyError';
  return failureReason(err);
}

interface RedisStoreOptions {
  prefix?: string;
  /** Take time from `clock` instead of Redis (the conformance suite's manual clock). */
  callerTime?: boolean;
}

/**
 * Rate-limit windows in Redis through ioredis (EVALSHA, falling back to EVAL once). The client
 * does not queue commands while disconnected and does not retry them: a request must be
 * counted now or counted locally (FallbackLimiterStore), never wait for a reconnect. ioredis
 * keeps reconnecting in the background.
 */
export class RedisLimiterStore implements SharedStore {
  readonly name = 'redis';
  readonly redis: Redis & HitCommand;
  readonly #prefix: string;
  readonly #callerTime: boolean;
  /** Why the connection last failed, so a refused hit names the real cause. */
  #lastError: string | undefined;
  readonly #connected: Promise<void>;

  constructor(
    url: string,
    private readonly clock: Clock,
    options: RedisStoreOptions = {},
  ) {
    this.#prefix = options.prefix ?? REDIS_KEY_PREFIX;
    this.#callerTime = options.callerTime === true;
    const RedisClient = redisClass();
    this.redis = new RedisClient(url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: 1_000,
      retryStrategy: (times) => Math.min(100 * times, 1_000),
    }) as Redis & HitCommand;
    // Errors surface on the calls that meet them, named by the last one seen here; unlistened
    // they would be thrown as unhandled 'error' events while Redis is down.
    this.redis.on('error', (err: unknown) => {
      this.#lastError = redisReason(err);
    });
    this.redis.defineCommand('netdiagHit', { numberOfKeys: 1, lua: HIT_SCRIPT });
    this.#connected = new Promise((resolve) => {
      this.redis.once('ready', () => {
        resolve();
      });
    });
  }

  /**
   * Settles once the first connection is up, or after `timeoutMs`: Redis down at start-up is not
   * fatal, the instance counts locally until it answers.
   */
  whenConnected(timeoutMs: number): Promise<void> {
    return Promise.race([
      this.#connected,
      new Promise<void>((resolve) => {
        setTimeout(resolve, timeoutMs).unref();
      }),
    ]);
  }

  async hit(key: string, windowMs: number): Promise<WindowHit> {
    try {
      const [count, remainingMs] = await this.redis.netdiagHit(this.#prefix + key, this.#callerTime ? String(this.clock.now()) : '', windowMs);
      return { count, resetAt: this.clock.now() + remainingMs };
    } catch (err) {
      // A command refused while disconnected says only that; the connection's error says why.
      const own = redisReason(err);
      throw Object.assign(new Error('redis hit failed'), { code: own === 'Error' && this.#lastError !== undefined ? this.#lastError : own });
    }
  }

  async ping(): Promise<void> {
    await this.redis.ping();
  }

  close(): void {
    this.redis.disconnect();
  }
}
