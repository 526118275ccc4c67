// Both address families measured apart: a dual-stack client whose IPv4 reaches the server
// through a router shaping it to 20 Mbit/s each way and whose IPv6 goes through another shaping
// it to 50 (test/support/multipath.ts: one path per family, tbf on each router's egress). The
// deployment serves its family origins (NETDIAG_IPV4_URL, NETDIAG_IPV6_URL); `netdiag speedtest
// --both` reads each family within 5% of the truth of its own path, each way, the truth measured
// from the client namespace by test/support/link-truth.ts over that path (path-truth.ts). The
// page does the same in Chromium run inside the client namespace, its "Both" choice measuring
// against family origins named by host name (a policy cannot name an IPv6 literal; Chromium's
// --host-resolver-rules give each name its path's server address, as single-family DNS records
// would), with no policy violation on its console. On the code before --both, the command
// refuses the option; a client that measured one family twice reads 20 or 50 for both, outside
// 5% of the other; a page without the family choice has no "Both" to choose.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
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
import { openWatched } from '../support/watched-page.js';

const ready = requireCommands('speed test over each family', ['ip', 'tc', 'ping', 'chromium'], 'iproute2 iputils-ping chromium') && canMakeNetns();
const CHROMIUM = '/usr/bin/chromium';

/** Each family's path: its rate both ways, Mbit/s, with a 20 ms queue. */
const RATES = { ipv4: 20, ipv6: 50 } as const;
const shapeOf = (rate: number) => ({ down: { rate, queueMs: 20 }, up: { rate, queueMs: 20 } });

/** The bound: within 5% of the truth of the family's own path. */
const SHARE = 0.05;

/** The page's deployment: its own port, its family origins named by host name (the CLI's deployment on 8080 names them by address). */
const PAGE_PORT = 8081;
const NAMES = { ipv4: 'ipv4.netdiag.test', ipv6: 'ipv6.netdiag.test' } as const;
const pageOrigin = (family: 'ipv4' | 'ipv6') => `http://${NAMES[family]}:${String(PAGE_PORT)}`;

/** `netdiag speedtest --both --json`: each family's run (where it went, its report), and the notes on how they differ. */
interface BothJson {
  ipv4?: { url: string; report: CliReport };
  ipv6?: { url: string; report: CliReport };
  notes?: string[];
}

describe.skipIf(!ready)('netdiag speedtest --both over families shaped apart', () => {
  let net: Multipath;
  let served: Awaited<ReturnType<typeof serveInServer>>;
  let pageServed: Awaited<ReturnType<typeof serveInServer>>;
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
    pageServed = await serveInServer(net, CLI, '::', {
      PORT: String(PAGE_PORT),
      NETDIAG_IPV4_URL: pageOrigin('ipv4'),
      NETDIAG_IPV6_URL: pageOrigin('ipv6'),
      NETDIAG_RATE_LIMITS: 'speedtest=100000,ip=100000',
      ...LOOPBACK_TRANSFERS,
    });
  }, 60_000);

  afterAll(async () => {
    await pageServed.stop();
    await served.stop();
    net.destroy();
  });

  /** The family's path's truth, measured once, when a test first needs it. */
  async function truthOf(family: 'ipv4' | 'ipv6'): Promise<LinkTruth> {
    const known = truths[family];
    if (known !== undefined) return known;
    const truth = await measurePathTruth(net, net.path(family), shapeOf(RATES[family]));
    process.stdout.write(`${family} path (${String(RATES[family])} Mbit/s): truth ${truth.download.sustainedMbps.toFixed(2)} down / ${truth.upload.sustainedMbps.toFixed(2)} up\n`);
    truths[family] = truth;
    return truth;
  }

  /** Misses of a client's figures (Mbit/s) against the family path's truth: each way within 5%. */
  function missesOf(client: string, family: 'ipv4' | 'ipv6', truth: LinkTruth, down: number | null, up: number | null): string[] {
    const misses: string[] = [];
    for (const [what, read, real] of [['download', down, truth.download.sustainedMbps], ['upload', up, truth.upload.sustainedMbps]] as const) {
      if (read === null) misses.push(`${client} ${family} ${what}: no figure`);
      else if (Math.abs(read - real) > real * SHARE) misses.push(`${client} ${family} ${what}: ${read.toFixed(2)} Mbit/s is not within 5% of its path's ${real.toFixed(2)}`);
    }
    return misses;
  }

  fullOnly('--both reads each family within 5% of its own path, each way', async () => {
    for (const p of net.paths) await truthOf(p.family);
    const url = origin('ipv4');
    const [command, ...args] = net.inClient([process.execPath, CLI, 'speedtest', '--both', '--mode', 'full', '--json', '--no-analytics', '--no-packet-loss', '--url', url, '--timeout', '30']);
    const run = await runProcess(command ?? 'ip', args, { PATH: process.env.PATH ?? '' }, 240_000);
    expect(run.code, run.stderr).toBe(0);
    const json = JSON.parse(run.stdout) as BothJson;
    const misses: string[] = [];
    for (const family of ['ipv4', 'ipv6'] as const) {
      const truth = await truthOf(family);
      const report = json[family]?.report;
      // Each family's run went to the deployment's origin for it, so over that family's path.
      if (json[family]?.url !== origin(family)) misses.push(`${family} ran against ${String(json[family]?.url)}, not ${origin(family)}`);
      const down = report?.download_mbps ?? null;
      const up = report?.upload_mbps ?? null;
      process.stdout.write(
        `${family} (${String(RATES[family])} Mbit/s): truth ${truth.download.sustainedMbps.toFixed(2)} down / ${truth.upload.sustainedMbps.toFixed(2)} up; --both ${String(down)} / ${String(up)}\n`,
      );
      misses.push(...missesOf('--both', family, truth, down, up));
    }
    // 20 against 50 Mbit/s is beyond either run's own spread, each way: the note says so.
    process.stdout.write(`--both notes: ${JSON.stringify(json.notes)}\n`);
    for (const direction of ['download', 'upload']) if (!(json.notes ?? []).some((n) => n.includes(direction))) misses.push(`no note that the ${direction} differs between the families`);
    expect(misses).toEqual([]);
  }, 600_000);

  fullOnly('the page, choosing Both with family origins set, reads each family within 5% of its own path, each way, with no policy violation', async () => {
    for (const p of net.paths) await truthOf(p.family);
    // playwright starts "chromium" through this wrapper, in the client namespace: the arguments
    // and the pipe it is driven over (fds 3 and 4) pass through ip netns exec.
    const wrapperDir = mkdtempSync(join(tmpdir(), 'netdiag-chromium-'));
    const wrapper = join(wrapperDir, 'chromium-in-client');
    writeFileSync(wrapper, `#!/bin/sh\nexec ${net.inClient([CHROMIUM]).join(' ')} "$@"\n`);
    chmodSync(wrapper, 0o755);
    const rules = (['ipv4', 'ipv6'] as const).map((family) => `MAP ${NAMES[family]} ${urlHost(net.path(family).serverAddress)}`).join(', ');
    const browser = await chromium.launch({ executablePath: wrapper, args: ['--no-sandbox', `--host-resolver-rules=${rules}`], timeout: 20_000 });
    try {
      const { page, context, requested, refused } = await openWatched(browser, `${pageOrigin('ipv4')}/?lang=en`);
      const violations: string[] = [];
      page.on('console', (message) => {
        if (/Content Security Policy/i.test(message.text())) violations.push(message.text());
      });
      try {
        await page.waitForSelector('#speed-family-pair:not([hidden])');
        await page.waitForSelector('#speed-mode option[value="full"]', { state: 'attached' });
        await page.selectOption('#speed-mode', 'full');
        await page.selectOption('#speed-family', 'both');
        await page.click('#speed-start');
        // Both runs end before the table shows; a run that fails shows its error instead.
        await page.waitForSelector('#speed-families:not([hidden]), #speed-error:not([hidden])', { timeout: 200_000 });
        expect(await page.textContent('#speed-status'), (await page.textContent('#speed-error')) ?? '').toBe('Done.');
        const misses: string[] = [];
        for (const family of ['ipv4', 'ipv6'] as const) {
          const truth = await truthOf(family);
          /** The family column's figure, Mbit/s (its data-value is bit/s). */
          const figure = async (name: string) => {
            const value = await page.getAttribute(`#speed-families-table td[data-family="${family}"][data-figure="${name}"]`, 'data-value');
            return value === null ? null : Number(value) / 1e6;
          };
          const down = await figure('download');
          const up = await figure('upload');
          process.stdout.write(
            `${family} (${String(RATES[family])} Mbit/s): truth ${truth.download.sustainedMbps.toFixed(2)} down / ${truth.upload.sustainedMbps.toFixed(2)} up; page ${down?.toFixed(2) ?? '-'} / ${up?.toFixed(2) ?? '-'}\n`,
          );
          // Each family's transfers went to its own origin, so over its own path.
          if (!requested.some((url) => url.startsWith(`${pageOrigin(family)}/__down`))) misses.push(`page ${family}: no download asked of ${pageOrigin(family)}`);
          misses.push(...missesOf('page', family, truth, down, up));
        }
        expect(misses).toEqual([]);
        expect(await refused()).toEqual([]);
        expect(violations).toEqual([]);
      } finally {
        await context.close();
      }
    } finally {
      await browser.close();
      rmSync(wrapperDir, { recursive: true, force: true });
    }
  }, 600_000);
});
