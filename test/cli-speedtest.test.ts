// `netdiag speedtest`'s measurement rules, as a process against a FAKE target
// (support/fake-speedtest-target.ts) that produces on demand what the real server never does:
// a reported server delay, transfers slow enough to end a direction or load the link, a refusal
// halfway, a stall. The whole command against the real server is in cli-client.test.ts.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeTarget, type FakeTarget, type FakeTargetBehaviour } from './support/fake-speedtest-target.js';
import { CLI, runCli } from './support/process.js';
import { eventually } from './support/wait.js';

interface Report {
  download_mbps: number | null;
  upload_mbps: number | null;
  latency_ms: number | null;
  jitter_ms: number | null;
  download_loaded_latency_ms: number | null;
  upload_loaded_latency_ms: number | null;
  streaming_quality: string;
  gaming_quality: string;
  video_call_quality: string;
}

let target: FakeTarget | undefined;
afterEach(async () => {
  await target?.close();
  target = undefined;
});

async function speedtest(behaviour: FakeTargetBehaviour, extra: string[] = []) {
  target = await startFakeTarget(behaviour);
  const run = await runCli(['speedtest', '--json', '--url', target.url, ...extra], {}, 30_000);
  return { ...run, report: run.code === 0 ? (JSON.parse(run.stdout) as Report) : undefined, target };
}

const transfers = (t: FakeTarget) => t.requests.filter((r) => !r.includes('bytes=0'));

describe('netdiag speedtest: how it measures', () => {
  it('takes latency as time to first byte less the Server-Timing duration', async () => {
    const plan: FakeTargetBehaviour['plan'] = [{ type: 'latency', packet_count: 5 }];
    // Large beside what a loaded machine adds to a loopback request, so half of it is a wide band.
    const PING_DELAY_MS = 200;
    const reported = await speedtest({ plan, pingDelayMs: PING_DELAY_MS, reportPingDelay: true });
    expect(reported.code).toBe(0);
    expect(reported.report?.latency_ms).toBeLessThan(PING_DELAY_MS / 2);
    await target?.close();
    const unreported = await speedtest({ plan, pingDelayMs: PING_DELAY_MS, reportPingDelay: false });
    expect(unreported.report?.latency_ms).toBeGreaterThanOrEqual(PING_DELAY_MS - 1);
    // Five pings, each an empty download marked idle, as the engine asks for them.
    expect(unreported.target.requests).toEqual(Array(5).fill('/__down?bytes=0&during=idle'));
  });

  it('sends a request once more when the server resets a kept-alive connection as it arrives, and only once', async () => {
    const plan: FakeTargetBehaviour['plan'] = [
      { type: 'latency', packet_count: 2 },
      { type: 'download', bytes_per_request: 1000, request_count: 3 },
    ];
    // A transfer arriving on a connection that answered before is reset unanswered, once: it is
    // sent again, so three transfers take four requests and the run ends with a figure.
    const reset = await speedtest({ plan, resetKeptAlive: 'once' });
    expect(reset.code, reset.stderr).toBe(0);
    expect(transfers(reset.target)).toEqual(Array(4).fill('/__down?bytes=1000'));
    expect(reset.report?.download_mbps).toBeGreaterThan(0);
    await target?.close();
    // Reset on the second try as well: the run fails, naming the reset, instead of trying forever.
    const twice = await speedtest({ plan, resetKeptAlive: 'twice' });
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain('GET /__down failed: ECONNRESET');
    expect(transfers(twice.target).length).toBeLessThanOrEqual(3);
  });

  it('skips the larger steps of a direction once a round\'s fastest request took over a second', async () => {
    const plan: FakeTargetBehaviour['plan'] = [
      { type: 'download', bytes_per_request: 1000, request_count: 1 },
      { type: 'download', bytes_per_request: 2000, request_count: 2 },
      { type: 'upload', bytes_per_request: 1000, request_count: 1 },
    ];
    const slow = await speedtest({ plan, transferDelayMs: 1100 });
    expect(slow.code).toBe(0);
    expect(transfers(slow.target)).toEqual(['/__down?bytes=1000', '/__up']);
    await target?.close();
    const fast = await speedtest({ plan, transferDelayMs: 0 });
    expect(transfers(fast.target)).toEqual(['/__down?bytes=1000', '/__down?bytes=2000', '/__down?bytes=2000', '/__up']);
  });

  it('pings alongside transfers of 250 ms or more for loaded latency, which fills in the quality classes', async () => {
    const plan: FakeTargetBehaviour['plan'] = [
      { type: 'latency', packet_count: 3 },
      { type: 'download', bytes_per_request: 1000, request_count: 2 },
      { type: 'upload', bytes_per_request: 1000, request_count: 2 },
    ];
    const loaded = await speedtest({ plan, transferDelayMs: 450 });
    expect(loaded.code).toBe(0);
    expect(loaded.target.requests.filter((r) => r.endsWith('during=download')).length).toBeGreaterThanOrEqual(2);
    expect(loaded.target.requests.filter((r) => r.endsWith('during=upload')).length).toBeGreaterThanOrEqual(2);
    const r = loaded.report;
    expect(r?.download_loaded_latency_ms).toBeGreaterThanOrEqual(0);
    expect(r?.upload_loaded_latency_ms).toBeGreaterThanOrEqual(0);
    for (const q of [r?.streaming_quality, r?.gaming_quality, r?.video_call_quality]) expect(['bad', 'poor', 'average', 'good', 'great']).toContain(q);
    // 1000 bytes in about half a second is some 16 kbit/s: below 1 Mbps, so streaming can't be great.
    expect(r?.download_mbps).toBeLessThan(1);
    expect(r?.streaming_quality).not.toBe('great');
    await target?.close();
    const quick = await speedtest({ plan, transferDelayMs: 0 });
    expect(quick.report?.download_loaded_latency_ms).toBeNull();
    expect(quick.report?.streaming_quality).toBe('pending');
  });

  it('a refusal halfway exits 1 with the problem\'s detail and reports speed_test_failed (engine_error)', async () => {
    const plan: FakeTargetBehaviour['plan'] = [{ type: 'download', bytes_per_request: 1000, request_count: 4 }];
    const run = await speedtest({ plan, refuse: { nth: 2, status: 429 } });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('GET /__down answered 429: Too many requests: the speedtest limit of 600 per minute is used up');
    expect(run.target.events.map((e) => e.event)).toEqual(['speed_test_started', 'speed_test_failed']);
    expect(run.target.events[1]?.properties).toMatchObject({ source: 'cli', mode: 'full', failure_reason: 'engine_error' });
    expect(run.target.events[0]?.event_id).toBe(run.target.events[1]?.event_id);
  });

  it('a target that stops sending fails as timeout after --timeout seconds', async () => {
    const plan: FakeTargetBehaviour['plan'] = [{ type: 'download', bytes_per_request: 100_000, request_count: 2 }];
    const started = Date.now();
    const run = await speedtest({ plan, stallNth: 1 }, ['--timeout', '1']);
    expect(run.code).toBe(1);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(run.stderr).toMatch(/no data from http:\/\/127\.0\.0\.1:\d+ for 1000 ms/);
    expect(run.target.events.at(-1)?.properties).toMatchObject({ failure_reason: 'timeout' });
  });

  it('an interrupt stops the test, reports speed_test_failed (cancelled) and exits 130', async () => {
    target = await startFakeTarget({ plan: [{ type: 'download', bytes_per_request: 1000, request_count: 3 }], transferDelayMs: 20_000 });
    const child = spawn(process.execPath, [CLI, 'speedtest', '--url', target.url], { env: { PATH: process.env.PATH ?? '' }, stdio: 'pipe' });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const fake = target;
    expect(await eventually(() => transfers(fake).length === 1, 10_000)).toBe(true);
    child.kill('SIGINT');
    const [code] = (await once(child, 'close')) as [number | null];
    expect(code).toBe(130);
    expect(stderr).toContain('the speed test was cancelled');
    expect(fake.events.map((e) => [e.event, e.properties.failure_reason])).toEqual([['speed_test_started', undefined], ['speed_test_failed', 'cancelled']]);
  });
});
