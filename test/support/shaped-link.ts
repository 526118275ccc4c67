// A link of known speed: this namespace (the client) ↔ a router namespace ↔ a server namespace,
// joined by two veth pairs, with tbf shaping the router's egress toward each side (download on
// the client-facing side, upload on the server-facing one). Shaping on the router, not on the
// sender's own host, so the queue builds where a real bottleneck's does (a sender's TCP Small
// Queues would hide a queue on its own interface). The server namespace sends with CUBIC, a
// loss-based sender that fills the queue as most servers do, and so does this namespace on the
// route to the server (`congctl cubic`). Needs root and iproute2.
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import { countCarried, type CarriedCount } from './link-carried.js';

/** One direction's shape: `rate` Mbit/s, a queue of `queueMs` at it, and optionally a bucket spent at a peak rate. */
export interface DirectionShape {
  rate: number;
  queueMs: number;
  /** tbf's bucket in bytes (by default 1 ms at the rate, at least two full frames). */
  burst?: number;
  /** The rate the bucket is spent at (tbf `peakrate`), Mbit/s: a "PowerBoost" of `burst` bytes. */
  peak?: number;
}

export interface ShapedLink {
  /** The server namespace's address, where the client reaches it. */
  serverAddress: string;
  /** argv that runs `command` in the server namespace. */
  inServer(command: string[]): string[];
  /**
   * Shapes both directions: `rateMbit` with a queue that holds `queueMs` of it (tbf `latency`), and
   * a bucket of `burstBytes` (by default 1 ms at the rate). With `peakMbit`, the bucket is spent at
   * that rate (tbf `peakrate`): a new flow gets `burstBytes` more than the rate would carry, at the
   * peak, as a cable link's "PowerBoost" does, then the rate.
   */
  shape(rateMbit: number, queueMs: number, burstBytes?: number, peakMbit?: number): void;
  /**
   * Shapes each direction on its own: `down` on the router's egress toward the client (what the
   * client downloads), `up` on its egress toward the server (what the client uploads).
   */
  shapeEach(shape: { down: DirectionShape; up: DirectionShape }): void;
  /** No qdisc on either side of the router: the veth path as fast as this machine moves it. */
  unshape(): void;
  /** Starts counting what the router sends each way, with ping to the server beside it (test/support/link-carried.ts). */
  countCarried(): CarriedCount;
  destroy(): void;
}

const run = (command: string, ...args: string[]) => execFileSync(command, args, { stdio: ['ignore', 'pipe', 'pipe'] }).toString();

/** The congestion controls the kernel lets a namespace pick, with CUBIC added if it was not. */
function allowCubic(): void {
  const allowed = run('sysctl', '-n', 'net.ipv4.tcp_allowed_congestion_control').trim().split(/\s+/);
  if (!allowed.includes('cubic')) run('sysctl', '-w', `net.ipv4.tcp_allowed_congestion_control=${[...allowed, 'cubic'].join(' ')}`);
}

/**
 * A pair of /30s (10.232.2k.0 and 10.232.2k+1.0) that no address or route of this host uses: a
 * link another suite holds, or one a killed run left behind, would make `ip route add` fail
 * with "File exists".
 */
function freeSubnetPair(): number {
  const used = run('ip', '-4', 'route', 'show', 'table', 'all') + run('ip', '-4', '-o', 'addr', 'show');
  const free = Array.from({ length: 128 }, (_, k) => k).filter((k) => !used.includes(`10.232.${String(k * 2)}.`) && !used.includes(`10.232.${String(k * 2 + 1)}.`));
  const pick = free[(randomBytes(1)[0] ?? 0) % Math.max(1, free.length)];
  if (pick === undefined) throw new Error('no free 10.232.0.0/16 subnet pair for a shaped link');
  return pick;
}

export function createShapedLink(): ShapedLink {
  const tag = randomBytes(3).toString('hex');
  const router = `ndr-${tag}`;
  const server = `nds-${tag}`;
  const third = freeSubnetPair();
  const client = { host: `10.232.${String(third * 2)}.1`, router: `10.232.${String(third * 2)}.2` };
  const far = { router: `10.232.${String(third * 2 + 1)}.1`, server: `10.232.${String(third * 2 + 1)}.2` };
  const links = { clientSide: `nda${tag}`, routerNear: `ndb${tag}`, routerFar: `ndc${tag}`, serverSide: `ndd${tag}` };
  run('ip', 'netns', 'add', router);
  run('ip', 'netns', 'add', server);
  const destroy = () => {
    for (const name of [router, server]) {
      try {
        run('ip', 'netns', 'del', name);
      } catch {
        // Already gone.
      }
    }
  };
  try {
    run('ip', 'link', 'add', links.clientSide, 'type', 'veth', 'peer', 'name', links.routerNear);
    run('ip', 'link', 'set', links.routerNear, 'netns', router);
    run('ip', 'netns', 'exec', router, 'ip', 'link', 'add', links.routerFar, 'type', 'veth', 'peer', 'name', links.serverSide);
    run('ip', 'netns', 'exec', router, 'ip', 'link', 'set', links.serverSide, 'netns', server);
    run('ip', 'addr', 'add', `${client.host}/30`, 'dev', links.clientSide);
    // No IPv6 link-local address on this side: its duplicate address detection would end a second
    // or two after `up` with an address change, which makes Chromium fail its requests in flight
    // (test/support/host-network-lock.ts).
    run('ip', 'link', 'set', links.clientSide, 'addrgenmode', 'none');
    run('ip', 'link', 'set', links.clientSide, 'up');
    // The client's uploads to the server with CUBIC too (this route only: the host's default, BBR
    // here, is left alone for everything else), so an upload fills the upload queue as the server's
    // downloads fill the download one; with BBR one bulk upload kept a 300 ms queue at 6 ms while
    // the clients' four streams held it at ~55, and neither showed the queue's size.
    allowCubic();
    run('ip', 'route', 'add', `${far.server}/32`, 'via', client.router, 'congctl', 'cubic');
    run('ip', '-n', router, 'addr', 'add', `${client.router}/30`, 'dev', links.routerNear);
    run('ip', '-n', router, 'addr', 'add', `${far.router}/30`, 'dev', links.routerFar);
    for (const dev of [links.routerNear, links.routerFar, 'lo']) run('ip', '-n', router, 'link', 'set', dev, 'up');
    run('ip', 'netns', 'exec', router, 'sysctl', '-qw', 'net.ipv4.ip_forward=1');
    run('ip', '-n', server, 'addr', 'add', `${far.server}/30`, 'dev', links.serverSide);
    for (const dev of [links.serverSide, 'lo']) run('ip', '-n', server, 'link', 'set', dev, 'up');
    run('ip', '-n', server, 'route', 'add', 'default', 'via', far.router);
    allowCubic();
    run('ip', 'netns', 'exec', server, 'sysctl', '-qw', 'net.ipv4.tcp_congestion_control=cubic');
  } catch (err) {
    try {
      run('ip', 'link', 'del', links.clientSide);
    } catch {
      // Not made, or gone with the namespaces.
    }
    destroy();
    throw err;
  }
  const removeRoot = (dev: string) => {
    try {
      run('ip', 'netns', 'exec', router, 'tc', 'qdisc', 'del', 'dev', dev, 'root');
    } catch {
      // No root qdisc to delete: unshaped (a veth's default is none, "noqueue").
    }
  };
  const shapeEach = ({ down, up }: { down: DirectionShape; up: DirectionShape }): void => {
    for (const [dev, { rate, queueMs, burst: burstBytes, peak: peakMbit }] of [[links.routerNear, down], [links.routerFar, up]] as const) {
      // A burst of 1 ms at the rate (at least two full frames): enough for tbf to keep the rate
      // at any timer resolution, small enough that a short transfer gains almost nothing from it.
      const burst = burstBytes ?? Math.max(3028, Math.round((rate * 1e6) / 8 / 1000));
      // tbf's peak rate needs its own bucket (`mtu`). One frame's, as tc-tbf(8) suggests for
      // accuracy, needs a timer event per frame: this machine's veth pairs then moved a 200 Mbit/s
      // peak at 120-130, and a 20 MB bucket lasted six seconds instead of 1.6. Ten frames (0.6 ms
      // at 200 Mbit/s) let the peak be what it is set to.
      const peak = peakMbit === undefined ? [] : ['peakrate', `${String(peakMbit)}mbit`, 'mtu', '16000'];
      // Deleted and added rather than `replace`d: tbf changed in place from a plain shape to one
      // with a peak rate (asym-50-5 to boosted-20-40 in the link matrix) stopped passing the
      // router's ARP toward the server, and the next connection failed with EHOSTUNREACH.
      removeRoot(dev);
      run('ip', 'netns', 'exec', router, 'tc', 'qdisc', 'add', 'dev', dev, 'root', 'tbf', 'rate', `${String(rate)}mbit`, 'burst', String(burst), ...peak, 'latency', `${String(queueMs)}ms`);
    }
  };
  return {
    serverAddress: far.server,
    inServer: (command) => ['ip', 'netns', 'exec', server, ...command],
    shape(rateMbit, queueMs, burstBytes, peakMbit) {
      const each: DirectionShape = { rate: rateMbit, queueMs, ...(burstBytes === undefined ? {} : { burst: burstBytes }), ...(peakMbit === undefined ? {} : { peak: peakMbit }) };
      shapeEach({ down: each, up: each });
    },
    shapeEach,
    unshape() {
      for (const dev of [links.routerNear, links.routerFar]) removeRoot(dev);
    },
    countCarried: () => countCarried(router, links.routerNear, links.routerFar, far.server),
    destroy() {
      // Deleting the router namespace deletes both pairs.
      destroy();
    },
  };
}

/** `netdiag serve` in the link's server namespace, once it listens: its URL, and how to stop it. */
export async function serveOnLink(link: ShapedLink, cli: string, env: Record<string, string>): Promise<{ base: string; stop(): Promise<void> }> {
  const [command, ...args] = link.inServer([process.execPath, cli, 'serve']);
  const server = spawn(command ?? 'ip', args, {
    env: { PATH: process.env.PATH ?? '', PORT: '8080', HOST: link.serverAddress, NETDIAG_DNS_UPSTREAM: 'udp://127.0.0.1:9', NETDIAG_EVENTS_SINK: 'none', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  await new Promise<void>((resolve, reject) => {
    server.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('"msg":"listening"')) resolve();
    });
    server.once('exit', (code) => {
      reject(new Error(`the server exited with ${String(code)}: ${out}`));
    });
  });
  return {
    base: `http://${link.serverAddress}:8080`,
    stop: async () => {
      if (server.exitCode === null) {
        server.kill('SIGTERM');
        await once(server, 'exit');
      }
    },
  };
}
