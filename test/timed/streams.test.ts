// One stream or many, `--streams`: the server's own sockets (`ss` in the server namespace,
// each connection's bytes_acked and bytes_received sampled every 100 ms) show one connection
// loading each direction at a time with `--streams 1`, and four with the default; the report names
// the count. Then a link whose single stream cannot fill it: the client's receive buffer held small
// (net.ipv4.tcp_rmem in a client namespace, test/support/multipath.ts) and its downloads' ACKs kept
// waiting behind a full upload queue (a bulk upload beside the test into a 150 ms queue: this kernel
// has no netem, and a user-space delay line would take the window off the path), so a
// connection's round trip is long and its window, not the link, bounds it: one stream and the
// default read different downloads, and each report says its stream count.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliReport } from '../support/cli-report.js';
import { startUploadSink, type UploadSink } from '../support/link-truth.js';
import { createMultipath, serveInServer, type Multipath } from '../support/multipath.js';
import { canMakeNetns } from '../support/netns.js';
import { CLI, runCli, runProcess } from '../support/process.js';
import { LOOPBACK_TRANSFERS } from '../support/server.js';
import { createShapedLink, serveOnLink, type ShapedLink } from '../support/shaped-link.js';
import { requireCommands } from '../support/system.js';
import { fullOnlySuite } from '../support/timed-set.js';

const ready = requireCommands('speed test streams', ['ip', 'tc', 'ss'], 'iproute2') && canMakeNetns();

/** Bytes a connection must move in one 100 ms sample to count as loading its direction then: 64 KiB, 5 Mbit/s. */
const LOADING_BYTES = 64 * 1024;

/** A connection's counters as the server's kernel has them. */
interface SocketCount {
  peer: string;
  sent: number;
  received: number;
}

/** The server's established connections on port 8080: `ss -tniH` in its namespace. */
function serverSockets(inServer: (command: string[]) => string[]): SocketCount[] {
  const [command, ...args] = inServer(['ss', '-tniH', 'state', 'established', '( sport = :8080 )']);
  const out = execFileSync(command ?? 'ip', args, { stdio: ['ignore', 'pipe', 'ignore'] }).toString();
  // Each connection is a line of addresses, then a line of its TCP info (-i).
  const lines = out.split('\n').filter((l) => l.trim() !== '');
  const sockets: SocketCount[] = [];
  for (let i = 0; i + 1 < lines.length; i += 2) {
    const peer = (lines[i] ?? '').trim().split(/\s+/).at(-1) ?? '';
    const info = lines[i + 1] ?? '';
    sockets.push({ peer, sent: Number(/bytes_acked:(\d+)/.exec(info)?.[1] ?? 0), received: Number(/bytes_received:(\d+)/.exec(info)?.[1] ?? 0) });
  }
  return sockets;
}

/** The most connections that loaded each direction in one sample, over `run`'s time, sampling every 100 ms. */
async function loadingConnections<T>(inServer: (command: string[]) => string[], run: Promise<T>): Promise<{ result: T; download: number; upload: number }> {
  const state = { done: false };
  const finished = run.finally(() => {
    state.done = true;
  });
  let before = new Map<string, SocketCount>();
  const most = { download: 0, upload: 0 };
  while (!state.done) {
    const now = serverSockets(inServer);
    const grew = (pick: (s: SocketCount) => number) => now.filter((s) => pick(s) - pick(before.get(s.peer) ?? { peer: s.peer, sent: 0, received: 0 }) >= LOADING_BYTES).length;
    // A connection seen for the first time counts what it moved since it opened: at most 100 ms.
    most.download = Math.max(most.download, grew((s) => s.sent));
    most.upload = Math.max(most.upload, grew((s) => s.received));
    before = new Map(now.map((s) => [s.peer, s]));
    await sleep(100);
  }
  return { result: await finished, ...most };
}

const speedtestArgs = (url: string, streams: string[]) => ['speedtest', ...streams, '--mode', 'full', '--json', '--no-analytics', '--no-packet-loss', '--url', url, '--timeout', '30'];

describe.skipIf(!ready)('netdiag speedtest --streams', () => {
  describe('connections at the server', () => {
    let link: ShapedLink;
    let served: Awaited<ReturnType<typeof serveOnLink>>;

    beforeAll(async () => {
      link = createShapedLink();
      link.shape(50, 20);
      served = await serveOnLink(link, CLI, { NETDIAG_RATE_LIMITS: 'speedtest=100000,ip=100000', ...LOOPBACK_TRANSFERS });
    }, 60_000);

    afterAll(async () => {
      await served.stop();
      link.destroy();
    });

    it('--streams 1 loads each direction over one connection at a time, the default over four; each report says so', async () => {
      const seen: Record<string, { download: number; upload: number; report: CliReport }> = {};
      for (const [name, streams] of [['--streams 1', ['--streams', '1']], ['the default', []]] as const) {
        const { result, download, upload } = await loadingConnections((command) => link.inServer(command), runCli(speedtestArgs(served.base, [...streams]), {}, 120_000));
        expect(result.code, result.stderr).toBe(0);
        seen[name] = { download, upload, report: JSON.parse(result.stdout) as CliReport };
      }
      const one = seen['--streams 1'];
      const four = seen['the default'];
      process.stdout.write(`connections loading at once, down/up: --streams 1 ${String(one?.download)}/${String(one?.upload)}, default ${String(four?.download)}/${String(four?.upload)}\n`);
      expect([one?.download, one?.upload]).toEqual([1, 1]);
      expect([one?.report.measured.download?.streams, one?.report.measured.upload?.streams]).toEqual([1, 1]);
      expect([four?.download, four?.upload]).toEqual([4, 4]);
      expect([four?.report.measured.download?.streams, four?.report.measured.upload?.streams]).toEqual([4, 4]);
    }, 300_000);
  });

  fullOnlySuite('a link one stream cannot fill', () => {
    let net: Multipath;
    let served: Awaited<ReturnType<typeof serveInServer>>;
    let sink: UploadSink | undefined;

    beforeAll(async () => {
      net = createMultipath([{ name: 'line', family: 'ipv4' }]);
      // 50 Mbit/s down; up, 10 with a queue of 150 ms that the bulk upload keeps full.
      net.path('line').shapeEach({ down: { rate: 50, queueMs: 20 }, up: { rate: 10, queueMs: 150 } });
      // A receive buffer of at most 64 KiB: a window of well under that, over a 150 ms round trip.
      const [command, ...args] = net.inClient(['sysctl', '-qw', 'net.ipv4.tcp_rmem=4096 32768 65536']);
      execFileSync(command ?? 'ip', args);
      served = await serveInServer(net, CLI, '0.0.0.0', { NETDIAG_RATE_LIMITS: 'speedtest=100000,ip=100000', ...LOOPBACK_TRANSFERS });
    }, 60_000);

    afterAll(async () => {
      await sink?.stop();
      await served.stop();
      net.destroy();
    });

    it('one stream and four read different downloads, each report naming its count', async () => {
      const line = net.path('line');
      sink = await startUploadSink({ inServer: (command: string[]) => net.inServer(command), serverAddress: line.serverAddress } as ShapedLink);
      const filler = startFiller(net, sink);
      try {
        // The upload queue filled before the first test.
        await sleep(3000);
        const reports: Record<string, CliReport> = {};
        for (const [name, streams] of [['single', ['--streams', '1']], ['multi', []]] as const) {
          const [command, ...args] = net.inClient([process.execPath, CLI, ...speedtestArgs(`http://${line.serverAddress}:8080`, [...streams])]);
          const run = await runProcess(command ?? 'ip', args, { PATH: process.env.PATH ?? '' }, 180_000);
          expect(run.code, run.stderr).toBe(0);
          reports[name] = JSON.parse(run.stdout) as CliReport;
        }
        const single = reports.single;
        const multi = reports.multi;
        process.stdout.write(`window-bound link: single ${String(single?.download_mbps)} Mbit/s down (${String(single?.measured.download?.streams)} stream), multi ${String(multi?.download_mbps)} (${String(multi?.measured.download?.streams)} streams)\n`);
        expect(single?.measured.download?.streams).toBe(1);
        expect(multi?.measured.download?.streams).toBe(4);
        // Each connection is held to its window a round trip, so four carry about four times one;
        // twice is the bound, far from a single stream filling the link.
        expect(multi?.download_mbps ?? 0).toBeGreaterThan(2 * (single?.download_mbps ?? Infinity));
      } finally {
        filler.kill('SIGTERM');
        await once(filler, 'exit');
      }
    }, 400_000);
  });
});

/** A bulk upload from the client namespace into the sink until killed: it keeps the upload queue full. */
function startFiller(net: Multipath, sink: UploadSink): ChildProcess {
  const code = String.raw`
const net = require('node:net');
const socket = net.connect(Number(process.argv[2]), process.argv[1]);
socket.on('error', () => {});
socket.write('99999999');
const block = Buffer.alloc(256 * 1024, 0x30);
const pump = () => { while (socket.write(block)); };
socket.on('drain', pump);
socket.on('connect', pump);
`;
  const [command, ...args] = net.inClient([process.execPath, '-e', code, sink.host, String(sink.port)]);
  return spawn(command ?? 'ip', args, { stdio: 'ignore' });
}
