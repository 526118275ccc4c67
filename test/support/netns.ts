// A network namespace joined to this one by a veth pair, so test traffic crosses a real
// interface (iproute2; needs root). Addresses come from 10.231.0.0/16, a /30 per namespace.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';

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

export function createNetns(): Netns {
  const tag = randomBytes(3).toString('hex');
  const name = `netdiag-${tag}`;
  const third = randomBytes(1)[0] ?? 0;
  const fourth = ((randomBytes(1)[0] ?? 0) & 0xfc) % 252;
  const hostAddress = `10.231.${third}.${fourth + 1}`;
  const nsAddress = `10.231.${third}.${fourth + 2}`;
  const hostSide = `ndh${tag}`;
  const nsSide = `ndn${tag}`;
  ip('netns', 'add', name);
  try {
    ip('link', 'add', hostSide, 'type', 'veth', 'peer', 'name', nsSide);
    ip('link', 'set', nsSide, 'netns', name);
    ip('addr', 'add', `${hostAddress}/30`, 'dev', hostSide);
    ip('link', 'set', hostSide, 'up');
    ip('-n', name, 'addr', 'add', `${nsAddress}/30`, 'dev', nsSide);
    ip('-n', name, 'link', 'set', nsSide, 'up');
    ip('-n', name, 'link', 'set', 'lo', 'up');
  } catch (err) {
    ip('netns', 'del', name);
    throw err;
  }
  return {
    name,
    hostAddress,
    nsAddress,
    exec: (command) => ['ip', 'netns', 'exec', name, ...command],
    // Deleting the namespace deletes its end of the pair, and with it the other end.
    destroy: () => {
      ip('netns', 'del', name);
    },
  };
}

/** Whether namespaces can be made here: iproute2 present and running as root. */
export function canMakeNetns(): boolean {
  return process.getuid?.() === 0;
}
