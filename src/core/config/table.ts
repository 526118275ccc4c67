// Configuration as a table: each runtime lists every variable it reads, with its parser (and so
// its bounds), its default and a one-line description, and reads the table with `readTable`. The
// README's configuration tables are checked against these tables, so the two cannot drift apart.
// A bad value stops start-up with one line naming the variable (docs/operations.md, "Configuration in depth").

/** A configuration value that stops start-up; `variable` names the culprit. */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(message);
    this.name = 'ConfigError';
  }
}

export type Env = Readonly<Record<string, string | undefined>>;

/** Inclusive bounds of a numeric setting, stated in its error message and in the README. */
export interface Bounds {
  readonly min: number;
  readonly max: number;
}

/**
 * Reads a variable's (trimmed, non-empty) text. It is pure, and throws a plain Error whose
 * message says what is wrong with the value; the table reader adds the variable's name.
 */
export type Parser<T> = ((text: string) => T) & { readonly bounds?: Bounds };

interface Variable<T> {
  /** What it sets, in one line (the README's table says more). */
  readonly about: string;
  readonly parse: Parser<T>;
  /** Its value when unset or empty. */
  readonly default: T;
  /** Set when the variable may not be left unset: the message saying why. */
  readonly required?: string;
}

/** Declares a row; the function only infers `T` from the parser and the default together. */
export function variable<T>(row: Variable<T>): Variable<T> {
  return row;
}

export type Table = Readonly<Record<string, Variable<unknown>>>;

/** The table as help text: a line per variable, its name and what it sets, in the table's order. */
export function describeTable(table: Table): string {
  const width = Math.max(...Object.keys(table).map((name) => name.length));
  return Object.entries(table)
    .map(([name, row]) => `  ${name.padEnd(width)}  ${row.about}`)
    .join('\n');
}

/** What a table reads to: each variable's name to its value. */
export type Values<T extends Table> = { -readonly [K in keyof T]: T[K] extends Variable<infer V> ? V : never };

/** An unset or empty variable means "use the default". */
function read(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/** Stops start-up naming `variable`: for the checks that span variables, after the table is read. */
export function fail(variable: string, message: string): never {
  throw new ConfigError(variable, message);
}

/** A parser's refusal of a value: the message only, the variable is added by `readTable`. */
export function invalid(message: string): never {
  throw new Error(message);
}

/** Every variable of `table`, in the table's order; the first bad one throws a ConfigError naming it. */
export function readTable<T extends Table>(table: T, env: Env): Values<T> {
  const values: Record<string, unknown> = {};
  for (const [name, row] of Object.entries(table)) {
    const text = read(env, name);
    if (text === undefined) {
      if (row.required !== undefined) fail(name, row.required);
      values[name] = row.default;
      continue;
    }
    try {
      values[name] = row.parse(text);
    } catch (err) {
      if (err instanceof ConfigError || !(err instanceof Error)) throw err;
      fail(name, err.message);
    }
  }
  return values as Values<T>;
}
