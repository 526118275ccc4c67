// What a fuzz target throws when a parser breaks its contract. Anything a target throws is a
// finding (Jazzer.js reports any uncaught error); this class names which promise was broken, so
// a finding already reported can be told from a new one (known-findings.ts).

export class InvariantViolation extends Error {
  constructor(
    /** `<target>/<invariant>`, e.g. `dns/answer-is-its-record`: stable, for known-findings.ts. */
    readonly invariant: string,
    detail: string,
    cause?: unknown,
  ) {
    super(`${invariant}: ${detail}`, { cause });
    this.name = 'InvariantViolation';
  }
}

/** Throws an InvariantViolation unless `holds`; `detail` is built only on failure. */
export function check(holds: boolean, invariant: string, detail: () => string): asserts holds {
  if (!holds) throw new InvariantViolation(invariant, detail());
}

/** JSON text of a value, for comparing plain data (results, chains) and printing it in a finding. */
export const json = (value: unknown): string => (value === undefined ? 'undefined' : JSON.stringify(value));

const describe = (err: unknown): string => (err instanceof Error ? `${err.name}: ${err.message}` : String(err));

/**
 * Runs a parser that reports bad input by throwing: its result, or `ok: false` when it threw what
 * `documented` accepts (its documented error); anything else it throws is itself a finding.
 */
export function outcome<T>(invariant: string, run: () => T, documented: (err: unknown) => boolean): { ok: true; value: T } | { ok: false; error: unknown } {
  try {
    return { ok: true, value: run() };
  } catch (err) {
    if (!documented(err)) throw new InvariantViolation(invariant, `threw an undocumented error: ${describe(err)}`, err);
    return { ok: false, error: err };
  }
}

/** Runs a function whose contract is to return for every input: any throw is a finding. */
export function total<T>(invariant: string, run: () => T): T {
  try {
    return run();
  } catch (err) {
    throw new InvariantViolation(invariant, `threw: ${describe(err)}`, err);
  }
}
