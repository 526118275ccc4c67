// src/common/: rules the clients (the page, the command line's client code) share with the server;
// besides the contract's generated types, the one part of src/ a client may import; it imports nothing else.
// A server's rate limit as every client meets it (docs/command-line.md, "Rate limits"; the page
// likewise): a 429 carries Retry-After in seconds (the API contract, section 8); the client waits
// that long and goes on, measuring again what the refusal cut, and gives up on a wait it cannot
// make. One rule for the page and the command line, so they agree on when a test is refused.

/**
 * The longest single wait a client accepts: the limits' window is 60 s (docs/api.md, "Rate
 * limits"), so a longer Retry-After is a server that wants no test now, not one to wait for.
 */
export const MAX_LIMIT_WAIT_S = 60;

/**
 * How often one test waits out a 429 before it gives up: each wait starts a new window of the
 * limit, so a test the limit refuses again and again is one larger than the limit, and waiting
 * more would not finish it.
 */
const MAX_LIMIT_WAITS = 3;

/** Retry-After's seconds (RFC 9110 section 10.2.3, delay-seconds only: the API sends no dates), or undefined when absent or not a number. */
export function retryAfterSeconds(header: string | null | undefined): number | undefined {
  if (header === null || header === undefined || !/^\s*[0-9]{1,9}\s*$/.test(header)) return undefined;
  return Number(header);
}

/** Why a 429 is not waited out: no Retry-After, one past MAX_LIMIT_WAIT_S, or refused again after MAX_LIMIT_WAITS. */
export type NotWaited = { why: 'no-retry-after' } | { why: 'too-long'; seconds: number } | { why: 'again'; waits: number; ms: number };

/** What a test has waited so far. */
export interface LimitWaits {
  count: number;
  ms: number;
}

/** The end of a test the rate limit refused and that could not wait (NotWaited), with the refusal itself. */
export class LimitRefusal extends Error {
  constructor(
    readonly refusal: unknown,
    readonly notWaited: NotWaited,
  ) {
    super(refusal instanceof Error ? refusal.message : String(refusal));
  }
}

/**
 * `step` again after each 429 it meets (`retryAfterOf` gives the refusal's Retry-After, or null
 * for a failure that is no 429), once `wait` has waited the seconds the server named; `waits`
 * counts them. Throws LimitRefusal for a refusal it cannot wait out, and any other failure as it is.
 */
export async function pastLimit<T>(step: () => Promise<T>, retryAfterOf: (err: unknown) => number | undefined | null, waits: LimitWaits, wait: (seconds: number) => Promise<void>): Promise<T> {
  for (;;) {
    try {
      return await step();
    } catch (err) {
      const seconds = retryAfterOf(err);
      if (seconds === null) throw err;
      if (waits.count >= MAX_LIMIT_WAITS) throw new LimitRefusal(err, { why: 'again', waits: waits.count, ms: waits.ms });
      if (seconds === undefined) throw new LimitRefusal(err, { why: 'no-retry-after' });
      if (seconds > MAX_LIMIT_WAIT_S) throw new LimitRefusal(err, { why: 'too-long', seconds });
      const from = Date.now();
      await wait(seconds);
      waits.count++;
      waits.ms += Date.now() - from;
    }
  }
}
