// A server's rate limit as the command line says it (docs/command-line.md, "Exit status"; the
// rule itself is src/common/rate-limit.ts): a refusal it cannot wait out ends the command with
// its own exit status, so a script or the monitor tells "the server said not now" from "the
// server is down".
import { MAX_LIMIT_WAIT_S, type NotWaited } from '../../common/rate-limit.js';

/** Exit status of a command the server's rate limit refused (1 is a failure of the API or network). */
export const RATE_LIMITED_EXIT = 4;

/** Why a refusal was not waited out, in words. */
export function notWaitedText(n: NotWaited): string {
  switch (n.why) {
    case 'no-retry-after':
      return 'it gave no Retry-After to wait for';
    case 'too-long':
      return `it asks to wait ${String(n.seconds)} s; try again then`;
    case 'again':
      return `refused again after ${String(n.waits)} waits (${String(Math.round(n.ms / 1000))} s in all): this test makes more requests than the limit allows in ${String(MAX_LIMIT_WAIT_S)} s`;
  }
}

/** The line a client says while it waits. */
export const waitingLine = (what: string, seconds: number, then: string): string =>
  `the server's rate limit refused ${what} (429); waiting ${String(seconds)} s as it asks (Retry-After), then ${then}`;
