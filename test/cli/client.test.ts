// The `netdiag` client commands as a user runs them: the built CLI as a child process
// against the real server on loopback, with Knot as its DNS upstream, a real `netdiag probe` and
// an analytics collector. A terminal comes from util-linux `script`, which gives the command a
// pseudo-terminal as an interactive shell would.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Collector } from '../support/collector.js';
import { startDeployment, type Deployment } from '../support/deployment.js';
import { CLI, runCli, type Finished } from '../support/process.js';
import { LOOPBACK_TRANSFERS, type TestServer } from '../support/server.js';
import { requireCommands } from '../support/system.js';
import { eventually, freePort } from '../support/wait.js';
import { PROBE_VARIABLES, SERVE_VARIABLES } from '../../src/runtime/node/adapter/config.js';
import { decodeResult } from '../../src/common/speedtest/share.js';

const ready = requireCommands('netdiag client commands', ['knotd', 'script'], 'knot bsdutils');
const VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
const ESC = '\u001b[';
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Runs `netdiag <args>` with a terminal for standard input, output and error (`script -q`). */
async function inTerminal(args: string[], env: Record<string, string> = {}): Promise<Finished> {
  const command = [process.execPath, CLI, ...args].map((a) => `'${a}'`).join(' ');
  const child = spawn('script', ['-qec', command, '/dev/null'], { env: { PATH: process.env.PATH ?? '', TERM: 'xterm', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stdout, stderr: '' };
}

describe.skipIf(!ready)('netdiag ip, dns, latency, speedtest and config against a real deployment', () => {
  let deployment: Deployment;
  let collector: Collector;
  let server: TestServer;
  let cli: (args: string[], env?: Record<string, string>) => Promise<Finished>;

  beforeAll(async () => {
    // Eight speed tests in about a minute: over loopback each makes a few hundred requests (four
    // streams of uploads capped at 64 MB run back to back at several Gbit/s), past the default limit.
    deployment = await startDeployment({ NETDIAG_RATE_LIMITS: 'speedtest=100000', ...LOOPBACK_TRANSFERS });
    ({ server, collector } = deployment);
    // The deployment through NETDIAG_URL, as an operator would set it once.
    cli = (args, env = {}) => runCli(args, { NETDIAG_URL: server.url, ...env }, 60_000);
  }, 60_000);

  afterAll(async () => {
    await deployment.close();
  });

  const api = async (path: string) => ((await (await fetch(`${server.url}${path}`)).json()) as { data?: unknown; title?: string; detail?: string });

  it('ip: the caller as the deployment sees it, aligned for people and the API\'s data for scripts', async () => {
    const human = await cli(['ip']);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^address +127\.0\.0\.1$/m);
    expect(human.stdout).toMatch(/^version +IPv4$/m);
    expect(human.stdout).toMatch(/^protocol +HTTP\/1\.1$/m);
    const json = await cli(['ip', '--json']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual((await api('/v1/ip')).data);
  });

  it('dns: Knot\'s answers, A by default; a bad name exits 1 with the problem\'s detail', async () => {
    const a = await cli(['dns', 'www.example.test']);
    expect(a.code).toBe(0);
    expect(a.stdout).toMatch(/^www\.example\.test A: no_error$/m);
    expect(a.stdout).toMatch(/^www\.example\.test +A +\d+ +192\.0\.2\.10$/m);
    const mx = await cli(['dns', 'example.test', 'mx']);
    expect(mx.stdout).toMatch(/^example\.test +MX +\d+ +10 mail\.example\.test$/m);
    expect(mx.stdout).toMatch(/^example\.test +MX +\d+ +20 mail2\.example\.test$/m);
    const json = await cli(['dns', '--json', 'www.example.test', 'AAAA']);
    const data = JSON.parse(json.stdout) as { answers: { address: string }[] };
    expect(data.answers.map((x) => x.address)).toEqual(['2001:db8::10']);

    const bad = await cli(['dns', 'bad..name']);
    const problem = await api('/v1/dns/resolve?name=bad..name&type=A');
    expect(bad.code).toBe(1);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toBe(`netdiag: ${String(problem.title)}: ${String(problem.detail)}\n`);
    expect((await cli(['dns', 'www.example.test', 'SRV'])).code).toBe(1);
  });

  it('dns: an answer without records says "no records" and why; NXDOMAIN exits 3, an empty answer 0 (docs/command-line.md)', async () => {
    const empty = await cli(['dns', 'www.example.test', 'TXT']);
    expect(empty.code).toBe(0);
    expect(empty.stdout).toBe('www.example.test TXT: no_error\nno records: www.example.test exists but has no TXT records\n');
    const missing = await cli(['dns', 'nosuch.example.test']);
    expect(missing.code).toBe(3);
    expect(missing.stdout).toBe('nosuch.example.test A: name_error\nno records: nosuch.example.test does not exist (NXDOMAIN)\n');
    expect(missing.stderr).toBe('');
    // A script reads the same status with --json.
    const json = await cli(['dns', 'nosuch.example.test', '--json']);
    expect(json.code).toBe(3);
    expect((JSON.parse(json.stdout) as { response_code: string }).response_code).toBe('name_error');
  });

  it('latency: the probe\'s region with the server\'s round trip to it and the client\'s own to the server', async () => {
    const human = await cli(['latency']);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^REGION +NAME +YOU → API +API → REGION +TOTAL$/m);
    expect(human.stdout).toMatch(/^weur +Western Europe +[\d.]+ ms +[\d.]+ ms +[\d.]+ ms$/m);
    const json = await cli(['latency', 'weur', '--json']);
    const { client_to_api_rtt_ms, regions } = JSON.parse(json.stdout) as { client_to_api_rtt_ms: number; regions: { region: string; edge_to_region_rtt_ms: number; client_to_api_rtt_ms: number }[] };
    expect(regions.map((r) => r.region)).toEqual(['weur']);
    expect(regions[0]?.edge_to_region_rtt_ms).toBeGreaterThan(0);
    expect(regions[0]?.client_to_api_rtt_ms).toBeGreaterThan(0);
    expect(client_to_api_rtt_ms).toBe(regions[0]?.client_to_api_rtt_ms);
  });

  it('latency and watch alike: an unknown region is bad usage (exit 2) naming the regions, one without a probe exit 1 naming those with one', async () => {
    for (const command of [['latency', 'mars'], ['watch', 'mars', '--count', '1']]) {
      const unknown = await cli(command);
      expect(unknown.code, command.join(' ')).toBe(2);
      expect(unknown.stderr).toContain('error: unknown region "mars": this deployment\'s regions are "wnam", "enam", "weur", "eeur", "apac-ne", "apac-se", "oc"\n');
    }
    for (const command of [['latency', 'apac-ne'], ['watch', 'apac-ne', '--count', '1']]) {
      const unprobed = await cli(command);
      expect(unprobed.code, command.join(' ')).toBe(1);
      expect(unprobed.stderr).toBe('netdiag: this deployment has no probe for "apac-ne": it has probes for "weur"\n');
    }
  });

  it('config: the modes and their steps, and the API\'s data as JSON', async () => {
    const human = await cli(['config']);
    expect(human.code).toBe(0);
    // The contract's constant engine name is no program's: the first line says what measures, in words.
    expect(human.stdout.split('\n')[0]).toBe("The speed test's plans: netdiag's page runs them with Cloudflare's speed-test engine, `netdiag speedtest` with its own client.");
    expect(human.stdout).not.toContain('@provider/speedtest');
    expect(human.stdout).toMatch(/^light: /m);
    expect(human.stdout).toMatch(/^full: /m);
    expect(human.stdout).toMatch(/^\d+ +download +\d+ +250000000$/m);
    expect(JSON.parse((await cli(['config', '--json'])).stdout)).toEqual((await api('/v1/speed-test/configuration')).data);
  });

  it('speedtest --mode light: download and upload above zero, and its events arrive with source "cli"', async () => {
    const before = collector.events().length;
    const human = await cli(['speedtest', '--mode', 'light']);
    expect(human.code).toBe(0);
    const shown = (name: string) => Number(new RegExp(`^${name} +([\\d.]+) Mbps (sustained \\(burst: [^;]+; |\\()4 streams[,;] [^)]+\\)$`, 'm').exec(human.stdout)?.[1]);
    expect(shown('download')).toBeGreaterThan(0);
    expect(shown('upload')).toBeGreaterThan(0);
    expect(human.stdout).toMatch(/^latency +[\d.]+ ms$/m);

    const json = await cli(['speedtest', '--mode', 'light', '--json']);
    const report = JSON.parse(json.stdout) as { mode: string; download_mbps: number; upload_mbps: number; latency_ms: number };
    expect(report.mode).toBe('light');
    expect(report.download_mbps).toBeGreaterThan(0);
    expect(report.upload_mbps).toBeGreaterThan(0);

    const mine = () => collector.events().slice(before);
    expect(await eventually(() => mine().filter((e) => e.event === 'speed_test_completed').length === 2, 15_000)).toBe(true);
    const events = mine();
    expect(events.map((e) => e.event).sort()).toEqual(['speed_test_completed', 'speed_test_completed', 'speed_test_started', 'speed_test_started']);
    for (const e of events) expect(e.properties).toMatchObject({ source: 'cli', tool_version: `netdiag-cli/${VERSION}`, mode: 'light' });
    // One random id per test: two tests, two ids, each on its started and completed event.
    expect(new Set(events.map((e) => e.event_id)).size).toBe(2);
    const completed = events.find((e) => e.event === 'speed_test_completed')?.properties as Record<string, unknown>;
    expect(Object.keys(completed).sort()).toEqual(['download_mbps', 'duration_ms', 'gaming_quality', 'jitter_ms', 'latency_ms', 'mode', 'source', 'streaming_quality', 'tool_version', 'upload_mbps', 'video_call_quality']);
    expect(JSON.stringify(events)).not.toContain('127.0.0.1');
  }, 90_000);

  it('speedtest --share prints a link to the page that carries the result and what it was measured with, and speed_test_shared arrives', async () => {
    const before = collector.events().length;
    const json = await cli(['speedtest', '--mode', 'light', '--json', '--share', '--no-packet-loss']);
    expect(json.code, json.stderr).toBe(0);
    const report = JSON.parse(json.stdout) as { download_mbps: number; upload_mbps: number; latency_ms: number; share_link: string };
    expect(report.share_link).toMatch(new RegExp(`^${server.url}/#r=1~[0-9a-z]+~l~`));
    const decoded = decodeResult(new URL(report.share_link).hash.slice(3));
    if (!decoded.ok) throw new Error(decoded.reason);
    expect((decoded.result.downloadBps ?? 0) / 1e6).toBeCloseTo(report.download_mbps, 1);
    expect((decoded.result.uploadBps ?? 0) / 1e6).toBeCloseTo(report.upload_mbps, 1);
    expect(decoded.result.latencyMs).toBeCloseTo(report.latency_ms, 1);
    expect(decoded.result.address).toBeUndefined();
    // What it was measured with, as the page's links say it, left out at the defaults: a default
    // link keeps the 11 fields a deployment that predates them reads.
    expect([decoded.result.streams, decoded.result.family]).toEqual([undefined, undefined]);
    expect(new URL(report.share_link).hash.split('~')).toHaveLength(11);
    const mine = () => collector.events().slice(before);
    expect(await eventually(() => mine().some((e) => e.event === 'speed_test_shared'), 15_000)).toBe(true);
    const shared = mine().find((e) => e.event === 'speed_test_shared');
    expect(Object.keys(shared?.properties as object).sort()).toEqual(['mode', 'source', 'tool_version']);
    // With --share-address the address the deployment sees is in the link (and only there).
    // (No events this time: they would arrive during the next test.)
    const human = await cli(['speedtest', '--mode', 'light', '--share-address', '--streams', '1', '-4', '--no-packet-loss', '--no-analytics']);
    const link = /^share: (\S+)$/m.exec(human.stdout)?.[1] ?? '';
    const withAddress = decodeResult(new URL(link).hash.slice(3));
    if (!withAddress.ok) throw new Error(withAddress.reason);
    expect([withAddress.result.address, withAddress.result.streams, withAddress.result.family]).toEqual(['127.0.0.1', 1, 'ipv4']);
    expect(JSON.stringify(collector.events())).not.toContain('127.0.0.1');
  }, 90_000);

  it('speedtest --no-analytics sends no event', async () => {
    const before = collector.events().length;
    expect((await cli(['speedtest', '--mode', 'full', '--no-analytics'])).code).toBe(0);
    // Then a test in the other mode that does send: once its events are through the sink, which
    // delivers in order, anything the first had sent would be too.
    expect((await cli(['speedtest', '--mode', 'light'])).code).toBe(0);
    const since = () => collector.events().slice(before);
    expect(await eventually(() => since().some((e) => e.event === 'speed_test_completed' && (e.properties as { mode: string }).mode === 'light'), 15_000)).toBe(true);
    expect(since().map((e) => [e.event, (e.properties as { mode: string }).mode])).toEqual([['speed_test_started', 'light'], ['speed_test_completed', 'light']]);
  }, 90_000);

  it('a URL with nothing listening exits 1 saying what failed to connect', async () => {
    const port = await freePort();
    const run = await cli(['ip', '--url', `http://127.0.0.1:${String(port)}`]);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`netdiag: cannot reach http://127.0.0.1:${String(port)}: connection refused (is netdiag running there?)\n`);
    const speed = await cli(['speedtest'], { NETDIAG_URL: `http://127.0.0.1:${String(port)}` });
    expect(speed.code).toBe(1);
    expect(speed.stderr).toContain('connection refused');
  });

  it('bad usage exits 2 for every command, serve and probe included, and starts nothing', async () => {
    for (const args of [['bogus'], [], ['serve', '--port', '9999'], ['serve', 'extra'], ['probe', '--verbose'], ['ip', 'extra'], ['ip', '--colour'], ['dns'], ['dns', 'a', 'A', 'more'], ['speedtest', '--mode', 'medium'], ['ip', '--timeout', 'soon'], ['ip', '--url', 'ftp://example.net']]) {
      const run = await cli(args, { PORT: '0' });
      expect({ args, code: run.code }).toEqual({ args, code: 2 });
      expect(run.stdout).toBe('');
      expect(run.stderr).not.toContain('listening');
    }
    const env = await cli(['ip'], { NETDIAG_URL: 'not a url' });
    expect(env.code).toBe(2);
    expect(env.stderr).toContain('NETDIAG_URL');
  });

  it('--help for every command prints its usage and exits 0 without starting anything; --version prints the version', async () => {
    for (const command of ['serve', 'probe', 'ip', 'dns', 'latency', 'speedtest', 'config']) {
      const run = await cli([command, '--help'], { PORT: '0' });
      expect(run.code).toBe(0);
      expect(run.stdout).toContain(`Usage: netdiag ${command}`);
      expect(run.stdout).not.toContain('listening');
    }
    // The servers' help lists every variable of their configuration tables, the probe's timeouts included.
    const probe = await cli(['probe', '--help']);
    for (const name of Object.keys(PROBE_VARIABLES)) expect(probe.stdout).toContain(name);
    expect(probe.stdout).toContain('NETDIAG_HEADERS_TIMEOUT_MS');
    expect(probe.stdout).not.toContain('NETDIAG_DNS_UPSTREAM');
    const serve = await cli(['serve', '--help']);
    for (const name of Object.keys(SERVE_VARIABLES)) expect(serve.stdout).toContain(name);
    const version = await cli(['--version']);
    expect(version).toMatchObject({ code: 0, stdout: `${VERSION}\n` });
  });

  it('npx netdiag runs the package\'s bin from the checkout', async () => {
    const child = spawn('npx', ['--no', '--', 'netdiag', 'ip', '--json', '--url', server.url], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    const [code] = (await once(child, 'close')) as [number | null];
    expect(code).toBe(0);
    expect((JSON.parse(stdout) as { address: string }).address).toBe('127.0.0.1');
  }, 30_000);

  it('colour only on a terminal and never with NO_COLOR; piped output is plain and has no progress bar', async () => {
    const terminal = await inTerminal(['ip', '--url', server.url]);
    expect(terminal.code).toBe(0);
    expect(terminal.stdout).toContain('127.0.0.1');
    expect(terminal.stdout).toContain(ESC);
    const noColor = await inTerminal(['ip', '--url', server.url], { NO_COLOR: '1' });
    expect(noColor.stdout).toContain('127.0.0.1');
    expect(noColor.stdout).not.toContain(ESC);
    const piped = await cli(['ip']);
    expect(piped.stdout).not.toContain(ESC);

    // The progress bar draws on a terminal's standard error and not into a pipe.
    const bar = await inTerminal(['speedtest', '--url', server.url, '--mode', 'light', '--no-analytics']);
    expect(bar.code).toBe(0);
    expect(bar.stdout).toMatch(/[\u2588\u2591]{10,}/);
    const quiet = await cli(['speedtest', '--mode', 'light', '--no-analytics']);
    expect(quiet.stderr).toBe('');
    expect(quiet.stdout).not.toMatch(/[\u2588\u2591]/);
    expect(quiet.stdout).not.toContain(ESC);
  }, 60_000);
});
