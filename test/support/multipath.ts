// A client namespace joined to a server namespace by several paths, each through a router
// namespace of its own that shapes it with tbf each way (the router's egress toward the client is
// what the client downloads, toward the server what it uploads; shaped on the router, not on the
// sender, as test/support/shaped-link.ts says why). A path carries one address family, so a
// dual-stack client's IPv4 and IPv6 can be shaped apart; two IPv4 paths are a client's two uplinks,
// chosen by source address with policy routing in the client namespace (routeBySource), as a
// multi-WAN host does. Nothing is made in this namespace (every veth pair is made inside the
// namespaces), so the host's interfaces never change and no host network lock is needed. Both
// ends send with CUBIC, as on the shaped link. Needs root and iproute2.
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import type { DirectionShape } from './shaped-link.js';

export type PathFamily = 'ipv4' | 'ipv6';

export interface Path {
  name: string;
  family: PathFamily;
  /** The client's address on this path (no brackets). */
  clientAddress: string;
  /** The server's address on this path's far side (no brackets): reached over this path alone. */
  serverAddress: string;
  /** Shapes this path: `down` on the router's egress toward the client, `up` toward the server. */
  shapeEach(shape: { down: DirectionShape; up: DirectionShape }): void;
}

export interface Multipath {
  paths: Path[];
  path(name: string): Path;
  /** argv that runs `command` in the client namespace. */
  inClient(command: string[]): string[];
  /** argv that runs `command` in the server namespace. */
  inServer(command: string[]): string[];
  /**
   * Puts `address` (IPv4) on the server's loopback, reached from the client over `defaultPath`,
   * and over each other path for packets sent from that path's client address (`ip rule from`):
   * one server address, the uplink picked by the source the client binds.
   */
  routeBySource(address: string, defaultPath: string): void;
  destroy(): void;
}

const run = (command: string, ...args: string[]) => execFileSync(command, args, { stdio: ['ignore', 'pipe', 'pipe'] }).toString();

/** The path's addresses: its number `i` picks a /30 (or /64) pair, near (client-router) and far (router-server). */
function addressesOf(family: PathFamily, i: number) {
  if (family === 'ipv4') {
    const near = `10.233.${String(2 * i)}`;
    const far = `10.233.${String(2 * i + 1)}`;
    return { client: `${near}.1`, routerNear: `${near}.2`, routerFar: `${far}.1`, server: `${far}.2`, prefix: 30, nearNet: `${near}.0/30` };
  }
  const near = `fd73:0:${String(i)}:1::`;
  const far = `fd73:0:${String(i)}:2::`;
  return { client: `${near}1`, routerNear: `${near}2`, routerFar: `${far}1`, server: `${far}2`, prefix: 64, nearNet: `${near}/64` };
}

export function createMultipath(specs: readonly { name: string; family: PathFamily }[]): Multipath {
  const tag = randomBytes(3).toString('hex');
  const client = `ndmc-${tag}`;
  const server = `ndms-${tag}`;
  const routers = specs.map((_, i) => `ndmr${String(i)}-${tag}`);
  const made: string[] = [];
  const destroy = () => {
    for (const name of made.reverse()) {
      try {
        run('ip', 'netns', 'del', name);
      } catch {
        // Already gone.
      }
    }
  };
  const inNs = (ns: string, ...args: string[]) => run('ip', 'netns', 'exec', ns, ...args);
  const paths: Path[] = [];
  try {
    for (const ns of [client, server, ...routers]) {
      run('ip', 'netns', 'add', ns);
      made.push(ns);
      run('ip', '-n', ns, 'link', 'set', 'lo', 'up');
    }
    allowCubic();
    for (const ns of [client, server]) inNs(ns, 'sysctl', '-qw', 'net.ipv4.tcp_congestion_control=cubic');
    specs.forEach((spec, i) => {
      const router = routers[i] ?? '';
      const a = addressesOf(spec.family, i);
      const dev = { client: `ndc${String(i)}`, routerNear: `ndn${String(i)}`, routerFar: `ndf${String(i)}`, server: `nds${String(i)}` };
      // Made inside the namespaces, the peer put straight into the other: never on this host.
      run('ip', '-n', client, 'link', 'add', dev.client, 'type', 'veth', 'peer', 'name', dev.routerNear, 'netns', router);
      run('ip', '-n', router, 'link', 'add', dev.routerFar, 'type', 'veth', 'peer', 'name', dev.server, 'netns', server);
      const v = spec.family === 'ipv6' ? ['-6'] : ['-4'];
      // nodad: an IPv6 address usable at once, not after duplicate address detection's second or so.
      const flags = spec.family === 'ipv6' ? ['nodad'] : [];
      for (const [ns, d, address] of [[client, dev.client, a.client], [router, dev.routerNear, a.routerNear], [router, dev.routerFar, a.routerFar], [server, dev.server, a.server]] as const) {
        run('ip', '-n', ns, ...v, 'addr', 'add', `${address}/${String(a.prefix)}`, 'dev', d, ...flags);
        run('ip', '-n', ns, 'link', 'set', d, 'up');
      }
      inNs(router, 'sysctl', '-qw', spec.family === 'ipv6' ? 'net.ipv6.conf.all.forwarding=1' : 'net.ipv4.ip_forward=1');
      // The far side's address over this path only, and the way back to this path's client.
      run('ip', '-n', client, ...v, 'route', 'add', `${a.server}/${spec.family === 'ipv6' ? '128' : '32'}`, 'via', a.routerNear);
      run('ip', '-n', server, ...v, 'route', 'add', a.nearNet, 'via', a.routerFar);
      paths.push({
        name: spec.name,
        family: spec.family,
        clientAddress: a.client,
        serverAddress: a.server,
        shapeEach: ({ down, up }) => {
          for (const [d, shape] of [[dev.routerNear, down], [dev.routerFar, up]] as const) {
            // A bucket of 1 ms at the rate (at least two full frames), as the shaped link's.
            const burst = shape.burst ?? Math.max(3028, Math.round((shape.rate * 1e6) / 8 / 1000));
            run('ip', 'netns', 'exec', router, 'tc', 'qdisc', 'replace', 'dev', d, 'root', 'tbf', 'rate', `${String(shape.rate)}mbit`, 'burst', String(burst), 'latency', `${String(shape.queueMs)}ms`);
          }
        },
      });
    });
  } catch (err) {
    destroy();
    throw err;
  }
  const path = (name: string): Path => {
    const found = paths.find((p) => p.name === name);
    if (found === undefined) throw new Error(`no path "${name}": the paths are ${paths.map((p) => p.name).join(', ')}`);
    return found;
  };
  return {
    paths,
    path,
    inClient: (command) => ['ip', 'netns', 'exec', client, ...command],
    inServer: (command) => ['ip', 'netns', 'exec', server, ...command],
    routeBySource(address, defaultPath) {
      path(defaultPath);
      run('ip', '-n', server, 'addr', 'add', `${address}/32`, 'dev', 'lo');
      paths.forEach((p, i) => {
        const { routerNear: via, server: far } = addressesOf(p.family, i);
        // Each router reaches the address over its own far side.
        run('ip', '-n', routers[i] ?? '', 'route', 'add', `${address}/32`, 'via', far);
        if (p.name === defaultPath) run('ip', '-n', client, 'route', 'add', `${address}/32`, 'via', via);
        else {
          const table = String(100 + i);
          run('ip', '-n', client, 'route', 'add', `${address}/32`, 'via', via, 'table', table);
          run('ip', '-n', client, 'rule', 'add', 'from', p.clientAddress, 'lookup', table);
        }
      });
    },
    destroy,
  };
}

/** CUBIC added to the congestion controls a namespace may pick, if it was not (as shaped-link.ts does). */
function allowCubic(): void {
  const allowed = run('sysctl', '-n', 'net.ipv4.tcp_allowed_congestion_control').trim().split(/\s+/);
  if (!allowed.includes('cubic')) run('sysctl', '-w', `net.ipv4.tcp_allowed_congestion_control=${[...allowed, 'cubic'].join(' ')}`);
}

/** `netdiag serve` in the server namespace on `host` port 8080, once it listens; its log so far, and how to stop it. */
export async function serveInServer(net: Multipath, cli: string, host: string, env: Record<string, string>): Promise<{ log(): string; stop(): Promise<void> }> {
  const [command, ...args] = net.inServer([process.execPath, cli, 'serve']);
  const child = spawn(command ?? 'ip', args, {
    env: { PATH: process.env.PATH ?? '', PORT: '8080', HOST: host, NETDIAG_DNS_UPSTREAM: 'udp://127.0.0.1:9', NETDIAG_EVENTS_SINK: 'none', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  await new Promise<void>((resolve, reject) => {
    const listening = () => {
      if (out.includes('"msg":"listening"')) {
        child.stdout.off('data', listening);
        resolve();
      }
    };
    child.stdout.on('data', listening);
    child.once('exit', (code) => {
      reject(new Error(`the server exited with ${String(code)}: ${out}`));
    });
  });
  return {
    log: () => out,
    stop: async () => {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await once(child, 'exit');
      }
    },
  };
}
