// The one reader of a server's `Server-Timing` header (W3C Server Timing, §3: a list of
// `name;dur=…` metrics) for every client: the server's own time, which a round trip leaves out,
// and where an upload's bytes arrived. A malformed entry is skipped, never thrown on: a header is
// the server's word, and a test goes on without it.

/** Each metric's duration by name, ms: the last of a name wins; entries without a finite `dur` are left out. */
export function serverTimingEntries(header: string | null | undefined): Map<string, number> {
  const metrics = new Map<string, number>();
  for (const m of (header ?? '').matchAll(/(?:^|,)\s*([A-Za-z0-9_-]+)\s*;[^,]*?\bdur=([0-9.]+)/g)) {
    const ms = Number(m[2]);
    if (Number.isFinite(ms)) metrics.set(m[1] ?? '', ms);
  }
  return metrics;
}

/** How an upload's body arrived: ms from its first byte to its last, and to a quarter, half and three quarters of it (empty when not all three were said). */
export interface BodyTiming {
  ms: number;
  quarters: number[];
}

/**
 * How an upload's body arrived, from `body;dur=` and `body25`, `body50`, `body75`, as netdiag's
 * /__up says (docs/api.md). Undefined without `body`.
 */
export function bodyTiming(header: string | null | undefined): BodyTiming | undefined {
  const metrics = serverTimingEntries(header);
  const ms = metrics.get('body');
  if (ms === undefined) return undefined;
  const quarters = ['body25', 'body50', 'body75'].map((name) => metrics.get(name));
  return { ms, quarters: quarters.every((q): q is number => q !== undefined) ? quarters : [] };
}

/** Durations this short are no processing time the speed-test library reads (its own rule). */
const NO_SERVER_TIME_MS = 0.01;

/**
 * The server's processing time, as Cloudflare's speed-test library reads it: `cfRequestDuration`
 * (or its shorter spellings, any case), else the sum of the `cfSpeed*` metrics; undefined when
 * none is over NO_SERVER_TIME_MS.
 */
export function serverProcessingMs(header: string | null | undefined): number | undefined {
  let single: number | undefined;
  let sum = 0;
  for (const [name, ms] of serverTimingEntries(header)) {
    if (/^cfReq(?:uest)?Dur(?:ation)?$/i.test(name)) single ??= ms;
    else if (/^cfSpeed/i.test(name)) sum += ms;
  }
  if (single !== undefined && single > NO_SERVER_TIME_MS) return single;
  return sum > NO_SERVER_TIME_MS ? sum : undefined;
}
