// The port check's connection on Node (src/features/ip/port-check.ts says what it answers): one
// TCP connection, closed as soon as it is accepted, nothing sent on it.
import { connect } from 'node:net';
import type { PortCheck } from '../../features/ip/port-check.js';

/**
 * How long a connection may take to be accepted. A port forwarded to a live service answers
 * within a round trip; a firewall that drops the SYN never answers, and a person waiting on
 * `curl host/port/22` should not wait for the kernel's own minutes of retries.
 */
const PORT_CHECK_TIMEOUT_MS = 2_000;

export function tcpPortCheck(timeoutMs = PORT_CHECK_TIMEOUT_MS): PortCheck {
  return {
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
