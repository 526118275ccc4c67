// Two uplinks: a client namespace with two uplinks, A shaped to 10 Mbit/s
// and B to 40 each way, each through a router of its own (test/support/multipath.ts), and one
// server address reached over A by default and over B for packets from B's address (policy
// routing by source in the client namespace, as docs/command-line.md shows a multi-WAN host).
// `netdiag speedtest --source <A>` and `--source <B>` against that one address each read their
// own uplink within 5% of its truth, each way (the truth measured from the client namespace over
// that uplink alone, test/support/path-truth.ts); a `netdiag monitor` with two checks, one per
// `source:`, keeps runs of both, each with its source and its own uplink's figure. On the code
// before --source, both runs leave by A (or the option is refused): B's read 10, not 40.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import type { CliReport } from '../support/cli-report.js';
import type { LinkTruth } from '../support/link-truth.js';
import { until } from '../support/monitor-process.js';
import { createMultipath, serveInServer, type Multipath } from '../support/multipath.js';
import { canMakeNetns } from '../support/netns.js';
import { measurePathTruth } from '../support/path-truth.js';
import { CLI, runProcess } from '../support/process.js';
import { LOOPBACK_TRANSFERS } from '../support/server.js';
import { requireCommands } from '../support/system.js';
import { fullOnly } from '../support/timed-set.js';

const ready = requireCommands('speed test on each uplink', ['ip', 'tc', 'ping'], 'iproute2 iputils-ping') && canMakeNetns();

/** Each uplink's rate both ways, Mbit/s, with a 20 ms queue. */
const RATES = { a: 10, b: 40 } as const;
const shapeOf = (rate: number) => ({ down: { rate, queueMs: 20 }, up: { rate, queueMs: 20 } });
/** The one server address both uplinks reach (on the server's loopback). */
const SERVICE = '10.233.250.1';
const URL_ = `http://${SERVICE}:8080`;

/** The bound for --source: within 5% of the uplink's truth. */
const SHARE = 0.05;
/**
 * The monitor's light test is held to a quarter of its uplink's truth (the link matrix's suite
 * bound): what it is asked is that each check's runs are kept, measured over its own uplink, and
 * 10 against 40 Mbit/s is far outside a quarter of either.
 */
const MONITOR_SHARE = 0.25;

const within = (read: number | null | undefined, truth: number, share: number) => read !== null && read !== undefined && Math.abs(read - truth) <= truth * share;

describe.skipIf(!ready)('netdiag speedtest --source on each of two uplinks', () => {
  let net: Multipath;
  let served: Awaited<ReturnType<typeof serveInServer>>;
  let dir: string;
  const truths: Partial<Record<'a' | 'b', LinkTruth>> = {};

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'netdiag-uplinks-'));
    net = createMultipath([
      { name: 'a', family: 'ipv4' },
      { name: 'b', family: 'ipv4' },
    ]);
    for (const name of ['a', 'b'] as const) net.path(name).shapeEach(shapeOf(RATES[name]));
    net.routeBySource(SERVICE, 'a');
    served = await serveInServer(net, CLI, '0.0.0.0', { NETDIAG_RATE_LIMITS: 'speedtest=100000,ip=100000', ...LOOPBACK_TRANSFERS });
  }, 60_000);

  /** The uplink's truth, measured once, when a test first needs it. */
  async function truthOf(name: 'a' | 'b'): Promise<LinkTruth> {
    const known = truths[name];
    if (known !== undefined) return known;
    const t = await measurePathTruth(net, net.path(name), shapeOf(RATES[name]));
    process.stdout.write(`uplink ${name} (${String(RATES[name])} Mbit/s): truth ${t.download.sustainedMbps.toFixed(2)} down / ${t.upload.sustainedMbps.toFixed(2)} up\n`);
    truths[name] = t;
    return t;
  }

  afterAll(async () => {
    await served.stop();
    net.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  fullOnly('--source on each uplink reads it within 5%, each way', async () => {
    const misses: string[] = [];
    for (const name of ['a', 'b'] as const) {
      const truth = await truthOf(name);
      const source = net.path(name).clientAddress;
      const [command, ...args] = net.inClient([process.execPath, CLI, 'speedtest', '--source', source, '--mode', 'full', '--json', '--no-analytics', '--no-packet-loss', '--url', URL_, '--timeout', '30']);
      const run = await runProcess(command ?? 'ip', args, { PATH: process.env.PATH ?? '' }, 240_000);
      if (run.code !== 0) {
        misses.push(`--source ${source}: exit ${String(run.code)}: ${run.stderr.trim().slice(0, 300)}`);
        continue;
      }
      const report = JSON.parse(run.stdout) as CliReport;
      process.stdout.write(`--source ${source} (uplink ${name}): ${String(report.download_mbps)} down / ${String(report.upload_mbps)} up\n`);
      if (!within(report.download_mbps, truth.download.sustainedMbps, SHARE)) misses.push(`uplink ${name} download ${String(report.download_mbps)} is not within 5% of ${truth.download.sustainedMbps.toFixed(2)}`);
      if (!within(report.upload_mbps, truth.upload.sustainedMbps, SHARE)) misses.push(`uplink ${name} upload ${String(report.upload_mbps)} is not within 5% of ${truth.upload.sustainedMbps.toFixed(2)}`);
    }
    expect(misses).toEqual([]);
  }, 300_000);

  fullOnly('a monitor with one check per source: runs of both, each with its source, each over its own uplink', async () => {
    const truth = { a: (await truthOf('a')).download.sustainedMbps, b: (await truthOf('b')).download.sustainedMbps };
    const database = join(dir, 'monitor.db');
    const config = join(dir, 'monitor.yaml');
    const check = (name: 'a' | 'b') => [`  - name: uplink ${name}`, '    run: speedtest', '    mode: light', `    source: ${net.path(name).clientAddress}`, '    cron: "* * * * * *"', '    spread: 0s'];
    writeFileSync(config, [`servers: [${URL_}]`, `database: ${database}`, 'listen: off', 'checks:', ...check('a'), ...check('b'), ''].join('\n'));
    const [command, ...args] = net.inClient([process.execPath, CLI, 'monitor', '--config', config]);
    const child = spawn(command ?? 'ip', args, { stdio: ['ignore', 'ignore', 'pipe'], env: { PATH: process.env.PATH ?? '', HOME: dir, NETDIAG_MONITOR_MIN_INTERVAL: '1s' } });
    const lines: string[] = [];
    child.stderr.on('data', (d: Buffer) => lines.push(...d.toString().split('\n').filter((l) => l !== '')));
    type Row = Record<string, unknown> & { check_name: string; ok: number; figures: string };
    const rows = (): Row[] => {
      try {
        const db = new DatabaseSync(database, { readOnly: true });
        try {
          return db.prepare('SELECT * FROM runs ORDER BY id').all() as Row[];
        } finally {
          db.close();
        }
      } catch {
        // Not made yet.
        return [];
      }
    };
    const kept = (name: 'a' | 'b') => rows().filter((r) => r.check_name === `uplink ${name}`);
    const exited = once(child, 'exit');
    try {
      // A monitor that ends (a configuration it refuses) ends the wait, with what it said.
      await until('a run of each check', () => child.exitCode !== null || (kept('a').length >= 1 && kept('b').length >= 1), 150_000, lines);
      expect(child.exitCode, lines.join('\n')).toBeNull();
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
    const misses: string[] = [];
    for (const name of ['a', 'b'] as const) {
      const source = net.path(name).clientAddress;
      for (const row of kept(name)) {
        const figures = JSON.parse(row.figures) as { download_mbps?: number };
        process.stdout.write(`monitor, uplink ${name}: ${JSON.stringify(row)}\n`);
        if (row.ok !== 1) misses.push(`uplink ${name}: a run failed: ${String(row.error)}`);
        else if (!within(figures.download_mbps, truth[name], MONITOR_SHARE)) misses.push(`uplink ${name}: ${String(figures.download_mbps)} Mbit/s down is not its uplink's ${truth[name].toFixed(2)}`);
        // The run's record names the address it was sent from (the history's source_address).
        if (row.source_address !== source) misses.push(`uplink ${name}: the run's record names the source ${String(row.source_address)}, not ${source}`);
      }
    }
    expect(misses).toEqual([]);
  }, 300_000);
});
