import { OPERATIONS, type Operation } from '../ports/limiter-store.js';

/** Requests per source per 60 s window, by operation (`NETDIAG_RATE_LIMITS`). */
export type Limits = Readonly<Record<Operation, number>>;

/**
 * `turn` counts credentials minted: a speed test asks once (and again if it is run again), so 10
 * a minute is many tests, while minting cannot be turned into a flood of relay allocations.
 */
const TURN_LIMIT = 10;

/**
 * `speedtest` counts requests to /__down and /__up: a default test makes about 350 to 400 (its
 * transfers and the round trips timed beside them), and a person runs the page and the command
 * line back to back with a monitor beside them: three tests in a minute, with room for each to be
 * run again, is 2400. What a source can take is bounded apart from this, by the transfers it
 * holds at once and the bytes it moves a minute (docs/api.md, "Transfers a source holds").
 */
const SPEEDTEST_LIMIT = 2_400;

/**
 * `port` counts port checks: each makes the server open a TCP connection to the caller, so it is
 * kept to what a person forwarding a port needs (try, change the router, try again), far below
 * what would make netdiag a port scanner of its callers' own addresses.
 */
const PORT_LIMIT = 10;

/**
 * `rpm` counts requests to /.well-known/nq and the URLs it names. A responsiveness client probes
 * while it loads the link (draft-ietf-ippm-responsiveness allows up to 100 probes a second;
 * `netdiag rpm` sends 10, a new connection's and a loaded connection's every 200 ms), and it runs
 * for 20 to 40 s: 6000 a minute lets a whole test of any such client through, one at a time.
 */
const RPM_LIMIT = 6_000;

export const DEFAULT_LIMITS: Limits = { ip: 120, dns: 30, probe: 30, events: 60, speedtest: SPEEDTEST_LIMIT, rpm: RPM_LIMIT, turn: TURN_LIMIT, port: PORT_LIMIT };

/** Highest limit an operator may set: far above any real use, well inside a counter's range. */
export const MAX_LIMIT = 100_000_000;

/** Fixed window length (docs/api.md, "Rate limits"). */
export const WINDOW_MS = 60_000;

/**
 * The wider windows of an IPv6 source and how many times the per-source limit each allows
 * (docs/api.md, "Rate limits"). A household or small office is handed a /56 or a /48 and puts a
 * few of its /64s to use at once: four networks of a /56 at full rate, sixteen of a /48, are
 * served. Anyone handed a /48 also holds 65 536 /64s; counted by /64 alone that is 65 536 times
 * the limit, and with these windows it is 16 times.
 */
export const AGGREGATES = [
  { prefix: 56, factor: 4 },
  { prefix: 48, factor: 16 },
] as const;
export type AggregatePrefix = (typeof AGGREGATES)[number]['prefix'];

/**
 * The store key for one operation and one keyed hash: `operation:hash` for the source's own
 * window, `operation/56:hash` and `operation/48:hash` for an IPv6 source's wider ones. The one
 * place its format is made.
 */
export function limiterKey(operation: Operation, hash: string, prefix?: AggregatePrefix): string {
  return prefix === undefined ? `${operation}:${hash}` : `${operation}/${String(prefix)}:${hash}`;
}

/** What a `limiterKey` was made for, or undefined for a key of another shape. */
export function windowOfKey(key: string): { operation: Operation; prefix: AggregatePrefix | undefined } | undefined {
  const head = key.slice(0, key.indexOf(':'));
  const slash = head.indexOf('/');
  const name = slash === -1 ? head : head.slice(0, slash);
  if (!(OPERATIONS as readonly string[]).includes(name)) return undefined;
  if (slash === -1) return { operation: name as Operation, prefix: undefined };
  const aggregate = AGGREGATES.find((a) => String(a.prefix) === head.slice(slash + 1));
  return aggregate === undefined ? undefined : { operation: name as Operation, prefix: aggregate.prefix };
}

/** Parses `ip=120,dns=30,probe=30,events=60`; omitted operations keep the spec's limit. */
export function parseLimits(value: string): Limits {
  const limits: Record<Operation, number> = { ...DEFAULT_LIMITS };
  const seen = new Set<string>();
  for (const raw of value.split(',')) {
    const [name, count, ...rest] = raw.trim().split('=');
    if (name === undefined || count === undefined || rest.length > 0) {
      throw new Error(`"${raw.trim()}" is not operation=count`);
    }
    if (!(OPERATIONS as readonly string[]).includes(name)) {
      throw new Error(`unknown operation "${name}" (expected ${OPERATIONS.join(', ')})`);
    }
    if (seen.has(name)) throw new Error(`operation "${name}" is given twice`);
    seen.add(name);
    if (!/^[0-9]{1,16}$/.test(count) || Number(count) < 1 || Number(count) > MAX_LIMIT) {
      throw new Error(`limit for "${name}" must be a whole number from 1 to ${MAX_LIMIT}, got "${count}"`);
    }
    limits[name as Operation] = Number(count);
  }
  return limits;
}
