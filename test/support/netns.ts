// A network namespace joined to this one by a veth pair, so test traffic crosses a real
// interface (iproute2; needs root). Addresses come from 10.231.0.0/16, a /30 per namespace, or
// from 11.231.0.0/16 when a test needs a caller that is not special-use (RFC 6890): 11.0.0.0/8 is
// ordinary unicast space, and the /30's connected route keeps the traffic on the veth pair.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { changingHostNetwork } from './host-network-lock.js';

export interface Netns {
  name: string;
  /** This side's address on the veth pair. */
  hostAddress: string;
  /** The namespace's address on the veth pair. */
  nsAddress: string;
  /** argv that runs `command` inside the namespace. */
  exec(command: string[]): string[];
  destroy(): void;
}

const ip = (...args: string[]) => execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });

export function createNetns(options: { globalUnicast?: boolean } = {}): Netns {
  const first = options.globalUnicast === true ? 11 : 10;
  const tag = randomBytes(3).toString('hex');
  const name = `netdiag-${tag}`;
  const third = randomBytes(1)[0] ?? 0;
  const fourth = ((randomBytes(1)[0] ?? 0) & 0xfc) % 252;
  const hostAddress = `${String(first)}.231.${third}.${fourth + 1}`;
  const nsAddress = `${String(first)}.231.${third}.${fourth + 2}`;
  const hostSide = `ndh${tag}`;
  const nsSide = `ndn${tag}`;
  changingHostNetwork(() => {
    ip('netns', 'add', name);
    try {
      ip('link', 'add', hostSide, 'type', 'veth', 'peer', 'name', nsSide);
      ip('link', 'set', nsSide, 'netns', name);
      ip('addr', 'add', `${hostAddress}/30`, 'dev', hostSide);
      // No IPv6 link-local address on this side: its duplicate address detection would end a
      // second or two after `up`, outside the lock, with an address change (host-network-lock.ts).
      ip('link', 'set', hostSide, 'addrgenmode', 'none');
      ip('link', 'set', hostSide, 'up');
      ip('-n', name, 'addr', 'add', `${nsAddress}/30`, 'dev', nsSide);
      ip('-n', name, 'link', 'set', nsSide, 'up');
      ip('-n', name, 'link', 'set', 'lo', 'up');
    } catch (err) {
      ip('netns', 'del', name);
      throw err;
    }
  });
  return {
    name,
    hostAddress,
    nsAddress,
    exec: (command) => ['ip', 'netns', 'exec', name, ...command],
    destroy: () => {
      changingHostNetwork(() => {
        // This side's end first: deleting the namespace would take it too, but in the kernel's
        // deferred cleanup, after the lock is let go.
        ip('link', 'del', hostSide);
        ip('netns', 'del', name);
      });
    },
  };
}

/** Whether namespaces can be made here: iproute2 present and running as root. */
export function canMakeNetns(): boolean {
  return process.getuid?.() === 0;
}

/** An IPv6 address that swallows connections: packets reach it, and no answer ever comes back. */
export interface Blackhole {
  /** The address, without brackets. */
  address: string;
  destroy(): void;
}

/**
 * A namespace holding one IPv6 address on a veth pair, with a blackhole route back to this side:
 * a SYN arrives, and the namespace's SYN-ACK (or RST) is dropped on its way out, so a client here
 * waits until it gives up, as it does on a network whose IPv6 is broken. Unlike a blackhole route
 * on this side, which fails a connect at once (EINVAL), nothing here says no.
 */
export function createBlackhole(): Blackhole {
  const tag = randomBytes(3).toString('hex');
  const name = `netdiag-bh-${tag}`;
  const prefix = `fd7e:${tag.slice(0, 4)}:${tag.slice(4)}::`;
  const hostAddress = `${prefix}1`;
  const address = `${prefix}2`;
  const hostSide = `ndb${tag}`;
  const nsSide = `ndc${tag}`;
  changingHostNetwork(() => {
    ip('netns', 'add', name);
    try {
      ip('link', 'add', hostSide, 'type', 'veth', 'peer', 'name', nsSide);
      ip('link', 'set', nsSide, 'netns', name);
      // nodad: usable at once, instead of after duplicate address detection's second or so.
      ip('-6', 'addr', 'add', `${hostAddress}/64`, 'dev', hostSide, 'nodad');
      // Nor a link-local address, whose detection would end after `up`, outside the lock.
      ip('link', 'set', hostSide, 'addrgenmode', 'none');
      ip('link', 'set', hostSide, 'up');
      ip('-n', name, '-6', 'addr', 'add', `${address}/64`, 'dev', nsSide, 'nodad');
      ip('-n', name, 'link', 'set', nsSide, 'up');
      ip('-n', name, '-6', 'route', 'add', 'blackhole', `${hostAddress}/128`);
    } catch (err) {
      ip('netns', 'del', name);
      throw err;
    }
  });
  return {
    address,
    destroy: () => {
      changingHostNetwork(() => {
        // As in createNetns: this side's end at once, not in the namespace's deferred cleanup.
        ip('link', 'del', hostSide);
        ip('netns', 'del', name);
      });
    },
  };
}
