/**
 * The limited operations and their per-source limits per 60 s window: the contract's four, and
 * two additions (docs/api.md, "Envelope, routes and limits"): `speedtest` for the speed-test
 * targets and `turn` for TURN credentials.
 */
export const OPERATIONS = ['ip', 'dns', 'probe', 'events', 'speedtest', 'turn'] as const;
export type Operation = (typeof OPERATIONS)[number];
export type Limits = Readonly<Record<Operation, number>>;

/**
 * `turn` counts credentials minted: a speed test asks once (and again if it is run again), so 10
 * a minute is many tests, while minting cannot be turned into a flood of relay allocations.
 */
const TURN_LIMIT = 10;

/**
 * `speedtest` counts requests to /__down and /__up: the full plan makes about 60 transfers plus
 * the engine's latency pings (one per 400 ms under load), so 600 a minute lets a test and its
 * retries through while a source cannot start many tests at once.
 */
export const DEFAULT_LIMITS: Limits = { ip: 120, dns: 30, probe: 30, events: 60, speedtest: 600, turn: TURN_LIMIT };

/** Highest limit an operator may set: far above any real use, well inside a counter's range. */
export const MAX_LIMIT = 100_000_000;

/** Fixed window length (docs/api.md, "Rate limits"). */
export const WINDOW_MS = 60_000;

/** The store key for one operation and one source's keyed hash: the one place its format is made. */
export function limiterKey(operation: Operation, hash: string): string {
  return `${operation}:${hash}`;
}

/** The operation a `limiterKey` was made for, or undefined for a key of another shape. */
export function operationOfKey(key: string): Operation | undefined {
  const name = key.slice(0, key.indexOf(':'));
  return (OPERATIONS as readonly string[]).includes(name) ? (name as Operation) : undefined;
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
