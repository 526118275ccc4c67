import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import type { SharedStore } from '../../ratelimit/fallback-store.js';
import type { WindowHit } from '../../ratelimit/store.js';
import type { Clock } from '../../services.js';

/**
 * One fixed window per key, counted atomically in one round trip. The window's end is kept in
 * the key and time comes from the calling instance (ARGV[1]), like the in-process store, so
 * every store follows the same rules and one conformance suite with a manual clock covers it.
 * The key expires a second after its window ends (slack for clock skew between instances).
 */
const HIT_SCRIPT = `
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local reset = tonumber(redis.call('HGET', KEYS[1], 'r'))
if reset == nil or now >= reset then
  reset = now + window
  redis.call('HSET', KEYS[1], 'c', 1, 'r', reset)
  redis.call('PEXPIRE', KEYS[1], window + 1000)
  return {1, reset}
end
return {redis.call('HINCRBY', KEYS[1], 'c', 1), reset}
`;

interface HitCommand {
  netdiagHit(key: string, now: number, windowMs: number): Promise<[number, number]>;
}

export const REDIS_KEY_PREFIX = 'netdiag:rl:';
/** Where a deployment without NETDIAG_RATE_LIMIT_KEY keeps its generated hash key. */
export const REDIS_HASH_KEY = 'netdiag:rl-hash-key';

/**
 * Rate-limit windows in Redis through ioredis (EVALSHA, falling back to EVAL once). The client
 * does not queue commands while disconnected and does not retry them: a request must be
 * counted now or counted locally (FallbackLimiterStore), never wait for a reconnect. ioredis
 * keeps reconnecting in the background.
 */
export class RedisLimiterStore implements SharedStore {
  readonly name = 'redis';
  readonly redis: Redis & HitCommand;

  /** Whether the instances' shared hash key is known (always, when it is configured). */
  #keyReady: boolean;
  /** The generated key this instance uses, or offers while Redis holds none. */
  #secret = randomBytes(32).toString('base64');
  readonly #connected: Promise<void>;

  /**
   * `onSharedKey`, when given, means no key was configured: the first instance to reach Redis
   * stores a random one (SET NX) and every instance hashes sources with it, so they count the
   * same source under the same Redis key. Until it is loaded, hits fail over to local counts.
   */
  constructor(
    url: string,
    private readonly clock: Clock,
    private readonly onSharedKey?: (key: string) => void,
    private readonly prefix = REDIS_KEY_PREFIX,
  ) {
    this.#keyReady = onSharedKey === undefined;
    this.redis = new Redis(url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: 1_000,
      retryStrategy: (times) => Math.min(100 * times, 1_000),
    }) as Redis & HitCommand;
    // Errors surface on the calls that meet them; the connection's own are expected while
    // Redis is down and would otherwise be thrown as unhandled 'error' events.
    this.redis.on('error', () => undefined);
    this.redis.defineCommand('netdiagHit', { numberOfKeys: 1, lua: HIT_SCRIPT });
    // Every (re)connection re-offers the key, in case Redis came back without it.
    this.#connected = new Promise((resolve) => {
      this.redis.on('ready', () => {
        void this.loadSharedKey()
          .catch(() => undefined)
          .then(resolve);
      });
    });
  }

  /**
   * Settles once the first connection is up and the key exchange on it has run, or after
   * `timeoutMs`: Redis down at start-up is not fatal, the instance counts locally until it
   * answers.
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
    if (!this.#keyReady) throw Object.assign(new Error('hash key not loaded'), { code: 'no_hash_key' });
    const [count, resetAt] = await this.redis.netdiagHit(this.prefix + key, this.clock.now(), windowMs);
    return { count, resetAt };
  }

  async ping(): Promise<void> {
    await this.redis.ping();
    await this.loadSharedKey();
  }

  /**
   * Loads the deployment's generated hash key, offering this instance's own when Redis has none
   * (first start, or a Redis that came back empty): whichever instance offers first wins and
   * the others adopt it, so instances never hash one source two ways for long.
   */
  async loadSharedKey(): Promise<void> {
    if (this.onSharedKey === undefined) return;
    await this.redis.set(REDIS_HASH_KEY, this.#secret, 'NX');
    const key = await this.redis.get(REDIS_HASH_KEY);
    if (key === null) throw new Error('the shared hash key vanished');
    if (key !== this.#secret || !this.#keyReady) this.onSharedKey(key);
    this.#secret = key;
    this.#keyReady = true;
  }

  close(): void {
    this.redis.disconnect();
  }
}
