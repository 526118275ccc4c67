// A server's rate limit as the clients meet it (docs/command-line.md, "Exit status"): a 429
// carries Retry-After in seconds (the API contract, section 8); a client waits that long once and
// goes on, saying so, and a refusal it cannot wait out ends the command with its own exit status,
// so a script or the monitor tells "the server said not now" from "the server is down".

/** Exit status of a command the server's rate limit refused (1 is a failure of the API or network). */
export const RATE_LIMITED_EXIT = 4;

/**
 * The longest single wait a client accepts: the limits' window is 60 s (docs/api.md, "Rate
 * limits"), so a longer Retry-After is a server that wants no test now, not one to wait for.
 */
export const MAX_LIMIT_WAIT_S = 60;

/** Retry-After's seconds (RFC 9110 section 10.2.3, delay-seconds only: the API sends no dates), or undefined when absent or not a number. */
export function retryAfterSeconds(header: string | null | undefined): number | undefined {
  if (header === null || header === undefined || !/^\s*[0-9]{1,9}\s*$/.test(header)) return undefined;
  return Number(header);
}

/** Why a 429 is not waited out, or undefined when it is: no Retry-After, or one past MAX_LIMIT_WAIT_S. */
export function notWaitable(seconds: number | undefined): string | undefined {
  if (seconds === undefined) return 'it gave no Retry-After to wait for';
  if (seconds > MAX_LIMIT_WAIT_S) return `it asks to wait ${String(seconds)} s; try again then`;
  return undefined;
}

/** The line a client says while it waits. */
export const waitingLine = (what: string, seconds: number, then: string): string =>
  `the server's rate limit refused ${what} (429); waiting ${String(seconds)} s as it asks (Retry-After), then ${then}`;
