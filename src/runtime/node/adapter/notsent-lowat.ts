import { readFileSync } from 'node:fs';

/**
 * The kernel's `net.ipv4.tcp_notsent_lowat`: how much unsent data a TCP socket may hold before
 * the kernel stops taking more from the server (Linux, per network namespace; Node cannot set
 * TCP_NOTSENT_LOWAT per socket). Unlimited by default, so a socket carrying a large download
 * buffers megabytes a small answer on the same connection must wait behind: a responsiveness
 * client's self probe (draft-ietf-ippm-responsiveness, which asks servers to keep that buffer
 * small) then measures this server's buffer, not the network's queue.
 */
const SYSCTL = '/proc/sys/net/ipv4/tcp_notsent_lowat';

/** The value an operator is told to set: 16 KiB, a little over a millisecond at 100 Mbit/s. */
export const SUGGESTED_NOTSENT_LOWAT = 16_384;

/** The setting, or undefined where this system has none to read (not Linux). */
export function readNotsentLowat(path = SYSCTL): number | undefined {
  try {
    const value = Number(readFileSync(path, 'utf8').trim());
    return Number.isFinite(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The warning `netdiag serve` logs at start when the setting is unlimited (0xFFFFFFFF, Linux's default), else undefined. */
export function notsentLowatWarning(value: number | undefined): string | undefined {
  if (value === undefined || value < 0xffffffff) return undefined;
  return `net.ipv4.tcp_notsent_lowat is unlimited: a response on a connection that carries a download waits behind megabytes of it in the kernel, and responsiveness (RPM) clients read that wait as the network's; set it, for example: sysctl -w net.ipv4.tcp_notsent_lowat=${String(SUGGESTED_NOTSENT_LOWAT)} (docs/operations.md)`;
}
