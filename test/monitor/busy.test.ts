// Issue 74's acceptance for `skip_when_busy` (docs/monitor.md, "Quiet when the link is busy"): a
// server in a network namespace reached over a veth pair (test/support/netns.ts) and a latency
// check against it each second. With `skip_when_busy: 20%` and a history whose last speed test
// measured the link at 50 Mbit/s each way: quiet, the check runs; while iperf3 (a separate process)
// pulls 30 Mbit/s from the namespace its runs are skipped and recorded, the reason naming the
// share, the rate and the interface the route leaves by; the transfer ended, it runs again. With
// `skip_when_busy: 5 Mbit/s` and the check's `source:`, the same through a 10 Mbit/s upload.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/cli/monitor/store.js';
import { runLinesOf, startMonitor, until } from '../support/monitor-process.js';
import { canMakeNetns, createNetns, type Netns } from '../support/netns.js';
import { CLI, runCli } from '../support/process.js';
import { requireCommands } from '../support/system.js';

if (!canMakeNetns()) {
  if (process.env.CI === 'true') throw new Error('skip_when_busy suite: needs root for network namespaces; CI requires it');
  process.stderr.write('\n*** SKIPPED skip_when_busy: needs root for network namespaces ***\n\n');
}
const ready = canMakeNetns() && requireCommands('skip_when_busy', ['ip', 'iperf3'], 'iproute2 iperf3');

/** The link's capacity the seeded speed test measured, Mbit/s each way, and what the transfer pulls. */
const MEASURED_MBIT = 50;
const TRANSFER_MBIT = 30;

/** A process in the namespace (or here), stopped in teardown whatever happened. */
function started(argv: string[], env: Record<string, string> = {}): ChildProcess {
  const [command, ...args] = argv;
  return spawn(command ?? 'false', args, { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
}

async function stopped(child: ChildProcess | undefined): Promise<void> {
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  await once(child, 'exit');
}

/** Resolves once the child has written `marker` on standard output; rejects if it exits first. */
async function said(child: ChildProcess, marker: string): Promise<void> {
  let out = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes(marker)) resolve();
    });
    child.once('exit', (code) => {
      reject(new Error(`${child.spawnargs.join(' ')} exited with ${String(code)}: ${out}`));
    });
  });
}

/** This side's interface of the veth pair: the one holding its address. */
const interfaceWith = (address: string): string | undefined => Object.entries(networkInterfaces()).find(([, list]) => list?.some((a) => a.address === address) === true)?.[0];

describe.skipIf(!ready)('skip_when_busy on a link a bulk transfer holds', () => {
  let dir: string;
  let ns: Netns;
  let server: ChildProcess;
  let iperf: ChildProcess;
  let base: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'netdiag-busy-'));
    ns = createNetns();
    base = `http://${ns.nsAddress}:8080`;
    server = started(ns.exec([process.execPath, CLI, 'serve']), { PORT: '8080', HOST: ns.nsAddress, NETDIAG_DNS_UPSTREAM: 'udp://127.0.0.1:9', NETDIAG_EVENTS_SINK: 'none', NETDIAG_RATE_LIMITS: 'probe=100000' });
    await said(server, '"msg":"listening"');
    iperf = started(ns.exec(['iperf3', '--server', '--bind', ns.nsAddress, '--forceflush']));
    await said(iperf, 'Server listening');
  }, 30_000);
  afterAll(async () => {
    await stopped(iperf);
    await stopped(server);
    ns.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  /**
   * A monitor with `checks` (its check `quiet` each second) and `dir`'s history `name`: its first run
   * on the quiet link, runs until one is skipped while `transfer` (iperf3's arguments) holds it, then
   * until one runs after the transfer ends. The quiet check's runs as `history --json` gives them,
   * each matching its log line.
   */
  async function throughTransfer(name: string, checks: readonly string[], transfer: readonly string[], seed: (database: string) => Promise<void> = () => Promise.resolve()): Promise<{ outcome: string; error: string | null }[]> {
    const database = join(dir, `${name}.db`);
    await seed(database);
    const config = join(dir, `${name}.yaml`);
    writeFileSync(config, [`servers: [${base}]`, `database: ${database}`, 'listen: off', 'checks:', ...checks, ''].join('\n'));
    const monitor = startMonitor(config, { HOME: dir, NETDIAG_MONITOR_BUSY_SAMPLE: '1s' });
    const runs = () => runLinesOf(monitor.lines, 'quiet');
    const skipped = () => runs().filter((l) => l.includes(': skipped: '));
    let sending: ChildProcess | undefined;
    try {
      await until('a run on the quiet link', () => runs().length >= 1, 10_000, monitor.lines);
      expect(skipped()).toEqual([]);
      sending = started(['iperf3', '--client', ns.nsAddress, ...transfer, '--time', '60']);
      await until('a run skipped while the transfer holds the link', () => skipped().length >= 1, 10_000, monitor.lines);
      await stopped(sending);
      const atEnd = runs().length;
      await until('a run after the transfer ended', () => runs().slice(atEnd).some((l) => !l.includes(': skipped: ')), 10_000, monitor.lines);
    } finally {
      await stopped(sending);
      await stopped(monitor.child);
    }
    const history = await runCli(['monitor', 'history', '--json', '--config', config], { HOME: dir });
    expect(history.code, history.stderr).toBe(0);
    const recorded = (JSON.parse(history.stdout) as { check: string; outcome: string; error: string | null }[]).filter((r) => r.check === 'quiet');
    expect(recorded.map((r) => r.outcome)).toEqual(runs().map((l) => (l.includes(': skipped: ') ? 'skipped' : 'ok')));
    return recorded;
  }

  it('a percent: runs while the link is quiet, is skipped and recorded with its share of the last speed test while a download holds it, and runs once it ends', async () => {
    // The link's capacity as this monitor last measured it: a speed test of the server an hour ago.
    const measuredAt = Date.now() - 3_600_000;
    const recorded = await throughTransfer(
      'percent',
      // "line speed" measures the link once a year: here only for its run in the history.
      ['  - name: line speed', '    run: speedtest', '    cron: "0 0 1 1 *"', '  - name: quiet', '    run: latency', '    cron: "* * * * * *"', '    spread: 0s', '    skip_when_busy: 20%'],
      // The namespace sends (--reverse) at a paced 30 Mbit/s: 60% of the 50 measured, this side's download.
      ['--reverse', '--bitrate', `${String(TRANSFER_MBIT)}M`],
      async (database) => {
        const store = await openStore(database);
        store.addRun({ check: 'line speed', server: base, startedAt: measuredAt, durationMs: 8000, ok: true, error: null, figures: { download_mbps: MEASURED_MBIT, upload_mbps: MEASURED_MBIT }, breaches: [], chosen: null, sourceAddress: null });
        store.close();
      },
    );
    const reason = recorded.find((r) => r.outcome === 'skipped')?.error ?? '';
    process.stdout.write(`skip_when_busy 20%: ${reason}\n`);
    const told = new RegExp(`^the link was ([0-9]+)% busy \\(skip_when_busy: 20%\\): ([0-9.]+) Mbit/s down on ${interfaceWith(ns.hostAddress) ?? '?'} of the 50\\.0 Mbit/s "line speed" measured at ${new Date(measuredAt).toISOString()}$`).exec(reason);
    expect(told, reason).not.toBeNull();
    // The figure named is what the transfer moved over the sample: its share of 50, at least the 20% that skips.
    const [percent, rate] = [Number(told?.[1]), Number(told?.[2])];
    expect(percent).toBeGreaterThanOrEqual(20);
    expect(Math.abs(percent - (rate / MEASURED_MBIT) * 100)).toBeLessThanOrEqual(1);
    expect(rate).toBeLessThanOrEqual(TRANSFER_MBIT * 1.2);
  }, 30_000);

  it("a rate, from the check's source: runs while quiet, is skipped and recorded with the rate while an upload holds the link, and runs once it ends", async () => {
    const recorded = await throughTransfer(
      'rate',
      ['  - name: quiet', '    run: latency', `    source: ${ns.hostAddress}`, '    cron: "* * * * * *"', '    spread: 0s', '    skip_when_busy: 5 Mbit/s'],
      // This side sends at a paced 10 Mbit/s, twice the rate that skips.
      ['--bitrate', '10M'],
    );
    const reason = recorded.find((r) => r.outcome === 'skipped')?.error ?? '';
    process.stdout.write(`skip_when_busy 5 Mbit/s: ${reason}\n`);
    const told = new RegExp(`^the link was carrying ([0-9.]+) Mbit/s up on ${interfaceWith(ns.hostAddress) ?? '?'} \\(skip_when_busy: 5 Mbit/s\\)$`).exec(reason);
    expect(told, reason).not.toBeNull();
    expect(Number(told?.[1])).toBeGreaterThanOrEqual(5);
  }, 30_000);
});
