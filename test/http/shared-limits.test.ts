// Limits shared between instances and threads: the Redis store behind the one limiter port (the
// conformance cases every store passes), two instances on one real redis-server, Redis stopped
// and restarted mid-run, the keys Redis holds, worker threads counting in one table at once, and
// N worker threads of `netdiag serve` on one port granting the limit once.
import { Worker } from 'node:worker_threads';
import { Pool } from 'undici';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FallbackLimiterStore } from '../../src/core/ratelimit/fallback-store.js';
import { MemoryLimiterStore } from '../../src/core/ratelimit/memory-store.js';
import { RedisLimiterStore } from '../../src/runtime/node/ports/limiter-store/redis-store.js';
import { send } from '../support/http.js';
import { limiterConformance } from '../../src/core/ports/limiter-store.conformance.js';
import { serveCli, type Serving } from '../support/process.js';
import { startRedis, type RedisServer } from '../support/redis.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { memoryLogger } from '../support/services.js';
import { requireCommands } from '../support/system.js';
import { eventually } from '../support/wait.js';

const hasRedis = requireCommands('shared rate limits on Redis', ['redis-server'], 'redis-server');
async function connected(store: RedisLimiterStore): Promise<RedisLimiterStore> {
  await store.whenConnected(5_000);
  return store;
}

/** A rate-limit key as an operator makes one (`openssl rand -base64 32`). */
const KEY = 'test-only-rate-limit-key-0123456789abcdef';

const THREAD_SERVE = fileURLToPath(new URL('../support/thread-serve.mjs', import.meta.url));
const BUILT_STORE = new URL('../../dist/core/ratelimit/memory-store.js', import.meta.url).href;

/** GET /v1/ip as a given caller (behind the trusted loopback proxy), on a fresh connection. */
const asCaller = (server: { url: string }, address: string) => send(`${server.url}/v1/ip`, { headers: { 'X-Forwarded-For': address } });

/** Statuses of `count` requests from one caller to a `netdiag serve` process, one after another. */
async function statusesFor(serving: Serving, caller: string, count: number): Promise<number[]> {
  const url = `http://127.0.0.1:${String(serving.port)}`;
  const statuses: number[] = [];
  for (let i = 0; i < count; i++) statuses.push((await asCaller({ url }, caller)).status);
  return statuses;
}

describe.skipIf(!hasRedis)('Redis', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis.close();
  });

  let n = 0;
  limiterConformance('redis', {
    create: async (clock) => connected(new RedisLimiterStore(redis.url, clock, { prefix: `netdiag:conformance:${String(++n)}:`, callerTime: true })),
    dispose: (store) => {
      if (store instanceof RedisLimiterStore) store.close();
    },
  });

  limiterConformance('redis behind the in-process fallback', {
    create: async (clock) => {
      return new FallbackLimiterStore(await connected(new RedisLimiterStore(redis.url, clock, { prefix: `netdiag:fallback:${String(++n)}:`, callerTime: true })), new MemoryLimiterStore(clock), memoryLogger(), {
        timeoutMs: 1000,
        retryMs: 1000,
        clock,
      });
    },
    // The cases must have run on Redis, not on the fallback.
    dispose: (store) => {
      expect(store instanceof FallbackLimiterStore && !store.degraded).toBe(true);
    },
  });

  it('a key lives as long as its window on Redis time, then is gone', async () => {
    const store = await connected(new RedisLimiterStore(redis.url, { now: () => Date.now() }, { prefix: 'netdiag:expiry:' }));
    const client = redis.client();
    try {
      await store.hit('k', 300);
      const ttl = await client.pttl('netdiag:expiry:k');
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(300);
      await new Promise((r) => setTimeout(r, 500));
      expect(await client.exists('netdiag:expiry:k')).toBe(0);
    } finally {
      store.close();
    }
  });

  it('windows run on Redis time: an instance whose clock runs ahead neither resets them nor reports a reset over 60 s', async () => {
    const ahead = { now: () => Date.now() + 30_000 };
    const behind = { now: () => Date.now() - 30_000 };
    const a = await connected(new RedisLimiterStore(redis.url, ahead, { prefix: 'netdiag:skew:' }));
    const b = await connected(new RedisLimiterStore(redis.url, behind, { prefix: 'netdiag:skew:' }));
    try {
      const hits = [];
      for (const [store, clock] of [[b, behind], [a, ahead], [b, behind], [a, ahead]] as const) {
        const hit = await store.hit('k', 60_000);
        hits.push({ count: hit.count, resetInMs: hit.resetAt - clock.now() });
      }
      expect(hits.map((h) => h.count)).toEqual([1, 2, 3, 4]);
      for (const h of hits) {
        expect(h.resetInMs).toBeGreaterThan(55_000);
        expect(h.resetInMs).toBeLessThanOrEqual(60_000);
      }
    } finally {
      a.close();
      b.close();
    }
  });

  describe('two service instances on one redis-server', () => {
    let a: TestServer;
    let b: TestServer;
    const env = () => ({ NETDIAG_REDIS_URL: redis.url, NETDIAG_RATE_LIMIT_KEY: KEY, NETDIAG_TRUST_PROXY: 'loopback', NETDIAG_RATE_LIMITS: 'ip=6' });
    const outage = (s: TestServer) => s.logs().filter((l) => l.msg === 'shared rate-limit store unavailable: counting in this process until it returns');
    const recovery = (s: TestServer) => s.logs().filter((l) => l.msg === 'shared rate-limit store available again');
    beforeAll(async () => {
      a = await startTestServer(env());
      b = await startTestServer(env());
    });
    afterAll(async () => {
      await a.close();
      await b.close();
    });

    it('share one window per source', async () => {
      const caller = '198.51.100.23';
      const statuses: number[] = [];
      const remaining: (string | null)[] = [];
      for (const server of [a, b, a, b, a, b, a, b]) {
        const res = await asCaller(server, caller);
        statuses.push(res.status);
        remaining.push(res.headers.get('ratelimit-remaining'));
      }
      expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429, 429]);
      expect(remaining).toEqual(['5', '4', '3', '2', '1', '0', '0', '0']);
    });

    it('keep no client address in any Redis key, and every key expires', async () => {
      await asCaller(a, '198.51.100.31');
      const client = redis.client();
      const keys = await client.keys('netdiag:rl*');
      expect(keys.length).toBeGreaterThan(0);
      for (const key of keys) {
        expect(key).not.toContain('198.51.100');
        // Nothing but hashed window keys: in particular no hash secret beside them.
        expect(key).toMatch(/^netdiag:rl:ip:[A-Za-z0-9_-]{43}$/);
        const ttl = await client.pttl(key);
        expect(ttl).toBeGreaterThan(0);
        expect(ttl).toBeLessThanOrEqual(60_000);
      }
    });

    it('Redis stopped: both keep answering and limit locally; Redis back: they share again', async () => {
      await redis.stop();
      const caller = '198.51.100.40';
      const onA: number[] = [];
      const onB: number[] = [];
      for (let i = 0; i < 8; i++) onA.push((await asCaller(a, caller)).status);
      for (let i = 0; i < 8; i++) onB.push((await asCaller(b, caller)).status);
      // Never a 500, never unlimited: each instance counts the caller by itself.
      expect(onA).toEqual([200, 200, 200, 200, 200, 200, 429, 429]);
      expect(onB).toEqual([200, 200, 200, 200, 200, 200, 429, 429]);
      // The transition is logged once per instance, not once per request.
      expect(outage(a)).toHaveLength(1);
      expect(outage(b)).toHaveLength(1);

      await redis.start();
      expect(await eventually(() => recovery(a).length === 1 && recovery(b).length === 1, 5000)).toBe(true);
      const fresh = '198.51.100.41';
      const shared: number[] = [];
      for (const server of [a, b, a, b, a, b, a]) shared.push((await asCaller(server, fresh)).status);
      expect(shared).toEqual([200, 200, 200, 200, 200, 200, 429]);
    });
  });

  it('NETDIAG_WORKERS=2 with Redis: the workers together allow exactly the limit per source', async () => {
    const serving = await serveCli({ NETDIAG_WORKERS: '2', NETDIAG_REDIS_URL: redis.url, NETDIAG_RATE_LIMIT_KEY: KEY, NETDIAG_TRUST_PROXY: 'loopback', NETDIAG_RATE_LIMITS: 'ip=10' });
    try {
      const statuses = await statusesFor(serving, '198.51.100.50', 25);
      expect(statuses.filter((s) => s === 200), serving.stdout()).toHaveLength(10);
      expect(statuses.filter((s) => s === 429)).toHaveLength(15);
    } finally {
      serving.child.kill('SIGTERM');
      await serving.exited;
    }
  });
});

describe('NETDIAG_WORKERS=2 without Redis', () => {
  it('two worker threads on one port together allow exactly the limit per source, and drain on SIGTERM', async () => {
    const serving = await serveCli({ NETDIAG_WORKERS: '2', NETDIAG_TRUST_PROXY: 'loopback', NETDIAG_RATE_LIMITS: 'ip=10' });
    const statuses = await statusesFor(serving, '198.51.100.60', 25);
    expect(statuses.filter((s) => s === 200), serving.stdout()).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(15);
    // Two worker threads and the primary announced the one shared port.
    expect(serving.stdout().match(new RegExp(`"port":${String(serving.port)},[^\\n]*"msg":"listening"`, 'g'))?.length).toBe(3);
    serving.child.kill('SIGTERM');
    expect(await serving.exited).toBe(0);
  });
});

describe('worker threads counting in one shared table at once', () => {
  it('four threads, 5 000 hits each on one key and on keys of their own: every hit counted once', { timeout: 30_000 }, async () => {
    const { createSharedTable } = await import('../../src/core/ratelimit/shared-table.js');
    const buffer = createSharedTable(1024);
    // The built store in each thread (a worker thread runs JavaScript, not the TypeScript source).
    const code = `
      const { workerData, parentPort, threadId } = require('node:worker_threads');
      import(workerData.store).then(({ MemoryLimiterStore }) => {
        const store = new MemoryLimiterStore({ now: () => Date.now() }, undefined, undefined, { buffer: workerData.buffer, holder: threadId + 1 });
        const seen = [];
        for (let i = 0; i < 5000; i++) {
          seen.push(store.hit('ip:together', 600000).count);
          store.hit('ip:alone-' + threadId, 600000);
        }
        parentPort.postMessage(seen);
      });`;
    const threads = Array.from({ length: 4 }, () => new Worker(code, { eval: true, workerData: { buffer, store: BUILT_STORE } }));
    const seen = await Promise.all(threads.map((t) => new Promise<number[]>((resolve, reject) => { t.once('message', resolve); t.once('error', reject); })));
    await Promise.all(threads.map((t) => t.terminate()));
    // One window, 20 000 hits: each count from 1 to 20 000 handed out exactly once.
    const all = seen.flat().sort((a, b) => a - b);
    expect(all).toEqual(Array.from({ length: 20_000 }, (_, i) => i + 1));
    const { MemoryLimiterStore: Store } = await import('../../src/core/ratelimit/memory-store.js');
    const reader = new Store({ now: () => Date.now() }, undefined, undefined, { buffer, holder: 99 });
    // The one shared key and each thread's own: five windows.
    expect(reader.size).toBe(5);
  });
});

describe('NETDIAG_WORKERS=2: a worker thread ended mid-burst, holding the limiter table\'s lock', () => {
  /**
   * The primary starts a replacement 1 s after a thread ends (RESTART_DELAY_MS in
   * src/runtime/node/adapter/threads.ts) and a thread starts in well under a second: waited on as
   * events (log lines), bounded with room for a loaded machine.
   */
  const REPLACED_WITHIN_MS = 15_000;
  const workersListening = (s: Serving) => s.stdout().split('\n').filter((l) => l.includes('"msg":"listening"') && !l.includes('"role":"primary"')).length;

  it('the process survives, another thread starts, and serving goes on, the shared count intact', { timeout: 60_000 }, async () => {
    const serving = await serveCli({ NETDIAG_WORKERS: '2', NETDIAG_TRUST_PROXY: 'loopback', NETDIAG_RATE_LIMITS: 'ip=1000000' }, [THREAD_SERVE]);
    const url = `http://127.0.0.1:${String(serving.port)}/v1/ip`;
    try {
      // Many requests in flight, each one a hit in the shared table; the thread is ended while
      // both threads are counting.
      const pool = new Pool(`http://127.0.0.1:${String(serving.port)}`, { connections: 64, headersTimeout: 3_000, bodyTimeout: 3_000 });
      let answered = 0;
      let flowing: () => void = () => undefined;
      const underWay = new Promise<void>((resolve) => { flowing = resolve; });
      const burst = Array.from({ length: 3000 }, (_, i) =>
        pool.request({ path: '/v1/ip', method: 'GET', headers: { 'x-forwarded-for': `198.51.100.${String(i % 250)}` } }).then(
          async (r) => {
            await r.body.dump();
            if (++answered === 50) flowing();
            return r.statusCode;
          },
          () => 0,
        ),
      );
      // Ended once the burst is being answered, with thousands still to come.
      await underWay;
      serving.child.stdin?.write('end-thread\n');
      const statuses = await Promise.all(burst);
      await pool.close();
      expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(0);
      expect(serving.child.exitCode).toBeNull();
      expect(await eventually(() => serving.stdout().includes('worker exited; starting another'), REPLACED_WITHIN_MS)).toBe(true);
      // The lock it was ended holding is freed by the primary (else every later hit would wait
      // out the lock's timeout and fail). The victim itself waits on that lock inside a request,
      // where it cannot end until the wait gives up (1 s): without that bound it never ends.
      expect(serving.stdout()).toContain('a worker thread ended holding the limiter table\'s lock: freed');
      // A replacement listens (its own 'listening' line, the third a worker thread wrote).
      expect(await eventually(() => workersListening(serving) === 3, REPLACED_WITHIN_MS)).toBe(true);
      // Fresh connections, spread by the kernel over both threads, all answered, one caller's
      // count going on across them.
      const after = await Promise.all(Array.from({ length: 20 }, () => send(url, { headers: { 'X-Forwarded-For': '203.0.113.77', Connection: 'close' } })));
      expect(after.map((r) => r.status)).toEqual(Array<number>(20).fill(200));
      const remaining = after.map((r) => Number(r.headers.get('ratelimit-remaining'))).sort((a, b) => b - a);
      expect(remaining).toEqual(Array.from({ length: 20 }, (_, i) => 1_000_000 - 1 - i));
      expect(serving.child.exitCode).toBeNull();
    } finally {
      serving.child.kill('SIGTERM');
      await serving.exited;
    }
  });
});

describe.skipIf(!hasRedis)('Redis trouble is named in the log', () => {
  const outageOf = (s: TestServer) => s.logs().find((l) => l.msg === 'shared rate-limit store unavailable: counting in this process until it returns');

  it('a wrong password is WRONGPASS, and requests are still limited locally', async () => {
    const secured = await startRedis(['--requirepass', 'right-password']);
    const server = await startTestServer({ NETDIAG_REDIS_URL: secured.url.replace('redis://', 'redis://:wrong-password@'), NETDIAG_RATE_LIMIT_KEY: KEY, NETDIAG_TRUST_PROXY: 'loopback', NETDIAG_RATE_LIMITS: 'ip=2' });
    try {
      const statuses = [];
      for (let i = 0; i < 3; i++) statuses.push((await asCaller(server, '198.51.100.90')).status);
      expect(statuses).toEqual([200, 200, 429]);
      expect(outageOf(server)?.reason).toBe('WRONGPASS');
      expect(server.rawLogs()).not.toContain('wrong-password');
    } finally {
      await server.close();
      await secured.close();
    }
  });

  it('TLS (rediss://) spoken to a plain port names the connection fault, not a hash key', async () => {
    const server = await startTestServer({ NETDIAG_REDIS_URL: redisTlsUrl(), NETDIAG_RATE_LIMIT_KEY: KEY, NETDIAG_TRUST_PROXY: 'loopback' });
    try {
      expect((await asCaller(server, '198.51.100.91')).status).toBe(200);
      const reason = outageOf(server)?.reason;
      expect(typeof reason).toBe('string');
      expect(reason).toMatch(/^E[A-Z_]+$/);
    } finally {
      await server.close();
    }
  });

  it('ioredis\'s plain-text warning (a password the server does not need) arrives as a JSON log line', async () => {
    const serving = await serveCli({ NETDIAG_REDIS_URL: redisUrlWithPassword(), NETDIAG_RATE_LIMIT_KEY: KEY });
    try {
      expect(await eventually(() => serving.stdout().includes('does not require a password'), 3_000)).toBe(true);
      for (const line of serving.stdout().trim().split('\n')) expect(() => JSON.parse(line) as unknown).not.toThrow();
      const warning = serving.stdout().split('\n').find((l) => l.includes('does not require a password')) ?? '';
      expect(JSON.parse(warning)).toMatchObject({ level: 'warn', source: 'console' });
      expect(serving.stderr()).not.toContain('does not require a password');
    } finally {
      serving.child.kill('SIGTERM');
      await serving.exited;
    }
  });

  let plain: RedisServer;
  const redisTlsUrl = () => plain.url.replace('redis://', 'rediss://');
  const redisUrlWithPassword = () => plain.url.replace('redis://', 'redis://:unneeded-password@');
  beforeAll(async () => {
    plain = await startRedis();
  });
  afterAll(async () => {
    await plain.close();
  });
});
