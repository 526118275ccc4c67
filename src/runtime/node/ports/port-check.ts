// The port check's connection on Node (src/features/ip/port-check.ts says what it answers): one
// TCP connection, closed as soon as it is accepted, nothing sent on it.
import { connect } from 'node:net';
import { networkInterfaces } from 'node:os';
import { parseAddress, type ParsedAddress } from '../../../core/net/address.js';
import type { PortCheck } from '../../../core/ports/port-check.js';

/**
 * How long a connection may take to be accepted. A port forwarded to a live service answers
 * within a round trip; a firewall that drops the SYN never answers, and a person waiting on
 * `curl host/port/22` should not wait for the kernel's own minutes of retries.
 */
const PORT_CHECK_TIMEOUT_MS = 2_000;

/**
 * Whether `address` is assigned to one of this host's interfaces. Read at each check, not at
 * start: addresses come and go (DHCP, a VPN, a container's network), and the check is limited to
 * a few a minute per caller.
 */
function isOwnAddress(address: ParsedAddress): boolean {
  for (const entries of Object.values(networkInterfaces())) {
    for (const entry of entries ?? []) {
      // Compared in canonical form, so ::ffff:a.b.c.d, zero padding or letter case cannot hide one.
      if (parseAddress(entry.address)?.text === address.text) return true;
    }
  }
  return false;
}

export function tcpPortCheck(timeoutMs = PORT_CHECK_TIMEOUT_MS): PortCheck {
  return {
    isOwnAddress,
    reach: (address, port) =>
      new Promise<boolean>((resolve) => {
        const socket = connect({ host: address.text, port });
        const done = (accepted: boolean) => {
          clearTimeout(timer);
          socket.destroy();
          resolve(accepted);
        };
        const timer = setTimeout(() => {
          done(false);
        }, timeoutMs);
        socket.once('connect', () => {
          done(true);
        });
        // Refused, unreachable, reset: not reachable. Nothing else can be told from here.
        socket.once('error', () => {
          done(false);
        });
      }),
  };
}
