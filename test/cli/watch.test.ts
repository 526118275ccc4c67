// `netdiag watch` as a user runs it: the built CLI against a real server and a real `netdiag
// probe`, the probe behind a user-space delay line for the --max-rtt threshold, a probe limit set
// low for limited polls, and a closed port for a watch of nothing.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDelayRelay, type DelayRelay } from '../support/delay-relay.js';
import { startProbeProcess, type ProbeProcess } from '../support/probe.js';
import { CLI, runCli } from '../support/process.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';
import { eventually, freePort } from '../support/wait.js';

const haveScript = requireCommands('netdiag watch on a terminal', ['script'], 'bsdutils');

/** The delay line's one-way delay: a round trip through it is at least twice this. */
const ONE_WAY_MS = 40;

interface Line {
  time: string;
  target: string;
  rtt_ms: number | null;
  status: 'ok' | 'failed' | 'limited';
  error?: string;
}

const lines = (stdout: string): Line[] =>
  stdout
    .trimEnd()
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Line);

describe('netdiag watch', () => {
  let probe: ProbeProcess;
  let relay: DelayRelay;
  let server: TestServer;
  let limited: TestServer;

  beforeAll(async () => {
    probe = await startProbeProcess({ host: '127.0.0.1', port: await freePort() });
    relay = await startDelayRelay({ host: '127.0.0.1', port: probe.port }, ONE_WAY_MS);
    server = await startTestServer({ NETDIAG_PROBES: `weur=http://127.0.0.1:${String(probe.port)},enam=http://127.0.0.1:${String(relay.port)}`, NETDIAG_RATE_LIMITS: 'probe=1000' });
    limited = await startTestServer({ NETDIAG_PROBES: `weur=http://127.0.0.1:${String(probe.port)}`, NETDIAG_RATE_LIMITS: 'probe=2' });
    for (const s of [server, limited]) expect(await eventually(() => s.logs().some((l) => l.msg === 'probe reachable'), 10_000)).toBe(true);
  }, 30_000);
  afterAll(async () => {
    await Promise.all([server.close(), limited.close()]);
    await relay.close();
    await probe.kill('SIGTERM');
  });

  it('--count 5 --interval 1 --json prints five parseable lines per target, one round a second', async () => {
    const res = await runCli(['watch', 'weur', '--count', '5', '--interval', '1', '--json', '--url', server.url], {}, 20_000);
    expect(res.code, res.stderr).toBe(0);
    const polls = lines(res.stdout);
    for (const target of ['server', 'weur']) {
      const mine = polls.filter((p) => p.target === target);
      expect(mine.map((p) => p.status)).toEqual(['ok', 'ok', 'ok', 'ok', 'ok']);
      for (const p of mine) {
        expect(p.rtt_ms).toBeGreaterThan(0);
        expect(Number.isNaN(Date.parse(p.time))).toBe(false);
        expect(Object.keys(p).sort()).toEqual(['rtt_ms', 'status', 'target', 'time']);
      }
      // Rounds are a second apart, scheduled from the start: round n is never polled before n
      // seconds after the first. A round the machine woke late does not move the next, so the
      // gap after a late one is shorter (850 ms was seen under a loaded run); a watch that
      // drifted early, or fired its rounds back to back, fails. 100 ms is for the first round's
      // own start, a few statements after the watch's clock starts.
      const first = Date.parse(mine[0]?.time ?? '');
      mine.forEach((p, n) => {
        expect(Date.parse(p.time) - first).toBeGreaterThanOrEqual(n * 1000 - 100);
      });
    }
    // The summary goes to standard error, so standard output is polls only.
    expect(res.stderr).toMatch(/^server: 5 polls, 5 answered, 0 failed \(0\.0% lost\), 0 limited; min [0-9.]+ ms/m);
    expect(res.stderr).toMatch(/^weur: 5 polls, 5 answered/m);
  });

  it('a region behind a delay line above --max-rtt: the watch goes on to its count and exits 3', async () => {
    const res = await runCli(['watch', 'enam', '--count', '3', '--interval', '1', '--json', '--max-rtt', String(ONE_WAY_MS), '--url', server.url], {}, 20_000);
    expect(res.code, res.stderr).toBe(3);
    const enam = lines(res.stdout).filter((p) => p.target === 'enam');
    expect(enam).toHaveLength(3);
    for (const p of enam) expect(p.rtt_ms).toBeGreaterThanOrEqual(2 * ONE_WAY_MS);
    expect(res.stderr).toMatch(new RegExp(`^threshold crossed: enam: 3 round trips above --max-rtt ${String(ONE_WAY_MS)} ms`, 'm'));
  });

  it('under the thresholds it exits 0', async () => {
    const res = await runCli(['watch', 'weur', '--count', '2', '--interval', '1', '--json', '--max-rtt', '10000', '--max-loss', '0', '--url', server.url], {}, 20_000);
    expect(res.code, res.stderr).toBe(0);
  });

  it('a probe limit set low shows 429s as limited, never as failures or loss', async () => {
    const res = await runCli(['watch', 'weur', '--count', '4', '--interval', '1', '--json', '--max-loss', '0', '--url', limited.url], {}, 20_000);
    expect(res.code, res.stderr).toBe(0);
    const weur = lines(res.stdout).filter((p) => p.target === 'weur');
    expect(weur.map((p) => p.status)).toEqual(['ok', 'ok', 'limited', 'limited']);
    expect(weur[2]?.error).toMatch(/^Rate limit exceeded: More than 2 probe requests/);
    expect(res.stderr).toMatch(/^weur: 4 polls, 2 answered, 0 failed \(0\.0% lost\), 2 limited/m);
  });

  it('warns when the regions and interval chosen exceed the probe limit', async () => {
    const res = await runCli(['watch', 'weur', 'enam', '--count', '1', '--interval', '1', '--json', '--url', server.url], {}, 20_000);
    expect(res.stderr).toContain('netdiag: 2 regions every 1 s is 120 probe requests a minute; deployments allow 30 by default, so expect polls marked limited (an --interval of 4 s or more fits)');
  });

  it('with nothing listening, each poll is a failure line and the watch goes on; no stack trace', async () => {
    const closed = await freePort();
    const res = await runCli(['watch', '--count', '3', '--interval', '1', '--json', '--url', `http://127.0.0.1:${String(closed)}`], {}, 20_000);
    expect(res.code).toBe(0);
    const polls = lines(res.stdout);
    expect(polls).toHaveLength(3);
    for (const p of polls) expect(p).toMatchObject({ target: 'server', rtt_ms: null, status: 'failed', error: expect.stringContaining('connection refused') as unknown });
    expect(res.stderr).not.toMatch(/\n\s+at /);
    // And with --max-loss it says so: every poll failed.
    const strict = await runCli(['watch', '--count', '2', '--interval', '1', '--json', '--max-loss', '50', '--url', `http://127.0.0.1:${String(closed)}`], {}, 20_000);
    expect(strict.code).toBe(3);
    expect(strict.stderr).toContain('threshold crossed: server: 100.0% of polls failed, above --max-loss 50%');
  });

  it('an unknown region is bad usage (exit 2)', async () => {
    const res = await runCli(['watch', 'mars', '--count', '1', '--url', server.url]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('error: unknown region "mars"');
  });

  it('a region this deployment has no probe for is refused at once (exit 1), naming the ones it has', async () => {
    const res = await runCli(['watch', 'weur', 'apac-ne', '--count', '1', '--url', limited.url]);
    expect(res.code).toBe(1);
    expect(res.stderr).toBe('netdiag: this deployment has no probe for "apac-ne": it has probes for "weur"\n');
    expect(res.stdout).toBe('');
  });

  it('Ctrl-C ends the watch normally: the polls so far, the summary, exit 0', async () => {
    const child = spawn(process.execPath, [CLI, 'watch', '--interval', '1', '--json', '--url', server.url], { stdio: 'pipe' });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    expect(await eventually(() => stdout.split('\n').length > 2, 10_000)).toBe(true);
    child.kill('SIGINT');
    const [code] = (await once(child, 'close')) as [number | null];
    expect(code).toBe(0);
    const polls = lines(stdout);
    expect(polls.length).toBeGreaterThanOrEqual(2);
    expect(stderr).toMatch(new RegExp(`^server: ${String(polls.length)} polls, ${String(polls.length)} answered`, 'm'));
  });

  it.runIf(haveScript)('on a terminal: a live table redrawn in place each round, then the summary', async () => {
    const command = [process.execPath, CLI, 'watch', 'weur', '--count', '2', '--interval', '1', '--url', server.url].map((a) => `'${a}'`).join(' ');
    const child = spawn('script', ['-qec', command, '/dev/null'], { env: { PATH: process.env.PATH ?? '', TERM: 'xterm', NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const [code] = (await once(child, 'close')) as [number | null];
    expect(code).toBe(0);
    // Drawn twice: the second time over the first (cursor up three lines, clear to the end).
    expect(out.match(/TARGET +LAST +MIN +MEDIAN +P95 +JITTER +FAILED +LIMITED/g)).toHaveLength(2);
    expect(out).toContain('\u001b[3A\u001b[J');
    expect(out).toMatch(/weur +[0-9.]+ ms +[0-9.]+ ms/);
    expect(out).toMatch(/^server: 2 polls, 2 answered/m);
    expect(out).not.toContain('{"time"');
  });
});
