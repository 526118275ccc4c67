// Issue 73's acceptance for address families: a dual-stack client whose IPv4 reaches the server
// through a router shaping it to 20 Mbit/s each way and whose IPv6 goes through another shaping
// it to 50 (test/support/multipath.ts: one path per family, tbf on each router's egress). The
// deployment serves its family origins (NETDIAG_IPV4_URL, NETDIAG_IPV6_URL); `netdiag speedtest
// --both` reads each family within 5% of the truth of its own path, each way, the truth measured
// from the client namespace by test/support/link-truth.ts over that path (path-truth.ts). On the
// code before --both, the command refuses the option; a client that measured one family twice
// reads 20 or 50 for both, outside 5% of the other.
import { afterAll, beforeAll, describe, expect } from 'vitest';
import type { CliReport } from '../support/cli-report.js';
import type { LinkTruth } from '../support/link-truth.js';
import { createMultipath, serveInServer, type Multipath } from '../support/multipath.js';
import { canMakeNetns } from '../support/netns.js';
import { measurePathTruth, urlHost } from '../support/path-truth.js';
import { CLI, runProcess } from '../support/process.js';
import { LOOPBACK_TRANSFERS } from '../support/server.js';
import { requireCommands } from '../support/system.js';
import { fullOnly } from '../support/timed-set.js';

const ready = requireCommands('speed test over each family', ['ip', 'tc', 'ping'], 'iproute2 iputils-ping') && canMakeNetns();

/** Each family's path: its rate both ways, Mbit/s, with a 20 ms queue. */
const RATES = { ipv4: 20, ipv6: 50 } as const;
const shapeOf = (rate: number) => ({ down: { rate, queueMs: 20 }, up: { rate, queueMs: 20 } });

/** The bound: within 5% of the truth of the family's own path. */
const SHARE = 0.05;

/** `netdiag speedtest --both --json`: each family's run (where it went, its report), and the notes on how they differ. */
interface BothJson {
  ipv4?: { url: string; report: CliReport };
  ipv6?: { url: string; report: CliReport };
  notes?: string[];
}

describe.skipIf(!ready)('netdiag speedtest --both over families shaped apart (issue 73)', () => {
  let net: Multipath;
  let served: Awaited<ReturnType<typeof serveInServer>>;
  const truths: Partial<Record<'ipv4' | 'ipv6', LinkTruth>> = {};
  /** The deployment's origin for a family: the server's address on that family's path. */
  const origin = (family: 'ipv4' | 'ipv6') => `http://${urlHost(net.path(family).serverAddress)}:8080`;

  beforeAll(async () => {
    net = createMultipath([
      { name: 'ipv4', family: 'ipv4' },
      { name: 'ipv6', family: 'ipv6' },
    ]);
    for (const p of net.paths) p.shapeEach(shapeOf(RATES[p.family]));
    served = await serveInServer(net, CLI, '::', {
      NETDIAG_IPV4_URL: origin('ipv4'),
      NETDIAG_IPV6_URL: origin('ipv6'),
      NETDIAG_RATE_LIMITS: 'speedtest=100000,ip=100000',
      ...LOOPBACK_TRANSFERS,
    });
  }, 60_000);

  afterAll(async () => {
    await served.stop();
    net.destroy();
  });

  fullOnly('--both reads each family within 5% of its own path, each way', async () => {
    for (const p of net.paths) truths[p.family] = await measurePathTruth(net, p, shapeOf(RATES[p.family]));
    const url = origin('ipv4');
    const [command, ...args] = net.inClient([process.execPath, CLI, 'speedtest', '--both', '--mode', 'full', '--json', '--no-analytics', '--no-packet-loss', '--url', url, '--timeout', '30']);
    const run = await runProcess(command ?? 'ip', args, { PATH: process.env.PATH ?? '' }, 240_000);
    expect(run.code, run.stderr).toBe(0);
    const json = JSON.parse(run.stdout) as BothJson;
    const misses: string[] = [];
    for (const family of ['ipv4', 'ipv6'] as const) {
      const truth = truths[family];
      const report = json[family]?.report;
      // Each family's run went to the deployment's origin for it, so over that family's path.
      if (json[family]?.url !== origin(family)) misses.push(`${family} ran against ${String(json[family]?.url)}, not ${origin(family)}`);
      const down = report?.download_mbps ?? null;
      const up = report?.upload_mbps ?? null;
      process.stdout.write(
        `${family} (${String(RATES[family])} Mbit/s): truth ${truth?.download.sustainedMbps.toFixed(2) ?? '-'} down / ${truth?.upload.sustainedMbps.toFixed(2) ?? '-'} up; --both ${String(down)} / ${String(up)}\n`,
      );
      for (const [what, read, real] of [['download', down, truth?.download.sustainedMbps], ['upload', up, truth?.upload.sustainedMbps]] as const) {
        if (read === null || real === undefined) misses.push(`${family} ${what}: no figure (${String(read)}) or no truth`);
        else if (Math.abs(read - real) > real * SHARE) misses.push(`${family} ${what}: ${read.toFixed(2)} Mbit/s is not within 5% of its path's ${real.toFixed(2)}`);
      }
    }
    // 20 against 50 Mbit/s is beyond either run's own spread, each way: the note says so.
    process.stdout.write(`--both notes: ${JSON.stringify(json.notes)}\n`);
    for (const direction of ['download', 'upload']) if (!(json.notes ?? []).some((n) => n.includes(direction))) misses.push(`no note that the ${direction} differs between the families`);
    expect(misses).toEqual([]);
  }, 600_000);
});
