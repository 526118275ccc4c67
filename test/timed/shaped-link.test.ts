// Idle latency on a shaped link through a user-space delay line: with 20 ms added
// (test/support/delay-relay.ts in front of the server of test/support/shaped-link.ts), the light
// test's idle latency must be within 2 ms of curl's time to first byte on a warm connection. The
// speed test's accuracy, bursts and loaded latency on shaped links are test/timed/link-matrix.test.ts.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDelayRelay, type DelayRelay } from '../support/delay-relay.js';
import { canMakeNetns } from '../support/netns.js';
import { CLI, runCli } from '../support/process.js';
import { createShapedLink, serveOnLink, type ShapedLink } from '../support/shaped-link.js';
import { requireCommands } from '../support/system.js';

const ready = requireCommands('idle latency through a delay line', ['ip', 'tc', 'curl'], 'iproute2 curl') && canMakeNetns();
const exec = promisify(execFile);

interface Report {
  latency_ms: number | null;
}

describe.skipIf(!ready)('idle latency through a delay line on a shaped link', () => {
  let link: ShapedLink;
  let served: Awaited<ReturnType<typeof serveOnLink>>;

  beforeAll(async () => {
    link = createShapedLink();
    served = await serveOnLink(link, CLI, { NETDIAG_RATE_LIMITS: 'speedtest=100000,turn=100' });
  }, 30_000);

  afterAll(async () => {
    await served.stop();
    link.destroy();
  });

  async function speedtest(mode: 'light' | 'full', url: string): Promise<Report> {
    const run = await runCli(['speedtest', '--mode', mode, '--json', '--no-analytics', '--no-packet-loss', '--url', url, '--timeout', '30'], {}, 240_000);
    expect(run.code, run.stderr).toBe(0);
    return JSON.parse(run.stdout) as Report;
  }

  it('with a 20 ms delay line, idle latency is within 2 ms of curl\'s time to first byte on a warm connection', async () => {
    link.shape(200, 20);
    const relay: DelayRelay = await startDelayRelay({ host: link.serverAddress, port: 8080 }, 10);
    try {
      const url = `http://127.0.0.1:${String(relay.port)}`;
      // Two requests on one connection: the second's time to first byte is one warm round trip.
      const firsts: number[] = [];
      for (let i = 0; i < 5; i++) {
        const { stdout } = await exec('curl', ['-s', '-o', '/dev/null', '-o', '/dev/null', '-w', '%{time_starttransfer} %{time_pretransfer}\\n', `${url}/__down?bytes=0`, `${url}/__down?bytes=0`]);
        const second = stdout.trim().split('\n')[1]?.split(' ').map(Number) ?? [];
        firsts.push(((second[0] ?? 0) - (second[1] ?? 0)) * 1000);
      }
      firsts.sort((a, b) => a - b);
      const curlMs = firsts[2] ?? 0;
      const cli = await speedtest('light', url);
      process.stdout.write(`idle latency through a 20 ms delay line: curl ${curlMs.toFixed(2)} ms, netdiag ${String(cli.latency_ms)} ms\n`);
      expect(curlMs).toBeGreaterThanOrEqual(20);
      expect(Math.abs((cli.latency_ms ?? 0) - curlMs)).toBeLessThanOrEqual(2);
    } finally {
      await relay.close();
    }
  }, 300_000);
});
