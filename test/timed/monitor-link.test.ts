// Issue 52's acceptance on a link of known speed: `netdiag monitor` measures a 40 Mbit/s link
// (tbf on a router namespace, test/support/shaped-link.ts) with a light speed test in a row,
// expecting at least 25 Mbit/s down; the link is lowered to 8 Mbit/s, and after the third breach in
// a row exactly one alert goes out through Debian's `apprise` command to a local receiver, with the
// figure and the threshold in it; the link restored, exactly one recovery notice. Every run logged
// is a row of the history.
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canMakeNetns } from '../support/netns.js';
import { CLI } from '../support/process.js';
import { runLinesOf, startMonitor, until } from '../support/monitor-process.js';
import { createShapedLink, serveOnLink, type ShapedLink } from '../support/shaped-link.js';
import { LOOPBACK_TRANSFERS } from '../support/server.js';
import { requireCommands } from '../support/system.js';

const ready = requireCommands('monitor on a shaped link', ['ip', 'tc', 'apprise'], 'iproute2 apprise') && canMakeNetns();

describe.skipIf(!ready)('netdiag monitor on a link whose rate is lowered mid-run', () => {
  let link: ShapedLink;
  let served: { base: string; stop(): Promise<void> };
  let receiver: Server;
  let dir: string;
  const received: { title: string; message: string }[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'netdiag-monitor-link-'));
    link = createShapedLink();
    link.shape(40, 20);
    served = await serveOnLink(link, CLI, { NETDIAG_RATE_LIMITS: 'speedtest=100000,ip=100000', ...LOOPBACK_TRANSFERS });
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        received.push(JSON.parse(body) as { title: string; message: string });
        res.end('{}');
      });
    });
    receiver.listen(0, '127.0.0.1');
    await once(receiver, 'listening');
  }, 60_000);
  afterAll(async () => {
    receiver.close();
    await served.stop();
    link.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('alerts once after the third slow run, with the figure and the threshold, and recovers once', async () => {
    const database = join(dir, 'monitor.db');
    const config = join(dir, 'monitor.yaml');
    const port = (receiver.address() as { port: number }).port;
    writeFileSync(
      config,
      `servers: [${served.base}]\ndatabase: ${database}\nlisten: off\nchecks:\n  - name: line speed\n    run: speedtest\n    mode: light\n    cron: "* * * * * *"\n    spread: 0s\n    expect: { download_mbps: ">= 25" }\n    alert_after: 3\nnotify: ["json://127.0.0.1:${String(port)}/alerts"]\n`,
    );
    const { child, lines } = startMonitor(config, { HOME: dir });
    const runs = () => runLinesOf(lines, 'line speed');
    const wait = (what: string, ok: () => boolean, ms: number) => until(what, ok, ms, lines);
    try {
      await wait('two runs at 40 Mbit/s', () => runs().length >= 2, 90_000);
      expect(runs().every((l) => !l.includes('breach'))).toBe(true);
      link.shape(8, 20);
      // The run under way when the link changed may read either: the alert comes after three slow ones.
      await wait('the alert', () => received.length >= 1, 120_000);
      const slow = runs().filter((l) => l.includes('breach'));
      expect(slow.length).toBeGreaterThanOrEqual(3);
      link.shape(40, 20);
      await wait('the recovery', () => received.length >= 2, 120_000);
      const atRecovery = runs().length;
      await wait('a run after the recovery', () => runs().length > atRecovery, 60_000);
    } finally {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
    process.stdout.write(`monitor on a shaped link: ${runs().map((l) => /download_mbps ([0-9.]+)/.exec(l)?.[1] ?? 'failed').join(', ')} Mbit/s\n`);
    expect(received).toHaveLength(2);
    const [alert, recovery] = received;
    expect(alert?.title).toBe(`netdiag monitor: line speed on ${served.base}: 3 breaches in a row`);
    // Each of the three runs the title counts, oldest first: its start, its figure (about 7.6
    // Mbit/s on an 8 Mbit/s link) and the threshold.
    const told = (alert?.message ?? '').split('\n');
    expect(told).toHaveLength(3);
    for (const line of told) {
      expect(line).toMatch(/^- [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z: download_mbps [0-9.]+ \(expected >= 25\)$/);
      expect(Number(/download_mbps ([0-9.]+)/.exec(line)?.[1])).toBeLessThan(10);
    }
    expect([...told].sort()).toEqual(told);
    expect(recovery?.title).toBe(`netdiag monitor: line speed on ${served.base} recovered`);
    const db = new DatabaseSync(database, { readOnly: true });
    expect((db.prepare('SELECT count(*) AS n FROM runs').get() as { n: number }).n).toBe(runs().length);
    db.close();
  }, 400_000);
});
