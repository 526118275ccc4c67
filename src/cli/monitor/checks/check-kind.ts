// What one kind of monitor check is (docs/monitor.md, "Checks and their figures"): the netdiag
// command it runs, the figures it reads from that command's --json, and the settings of its own a
// check may give. Each kind is one file beside this one; kinds.ts lists them.

/** A figure a check reports, by the name an expectation, the history and /metrics give it. */
export type Figure =
  /** A number, in `unit` (its name says it too: _mbps, _ms, _percent). */
  | { name: string; kind: 'number'; unit: string }
  /** A bufferbloat grade, best first: A+, A, B, C, D, F (src/common/speedtest/bufferbloat.ts). */
  | { name: string; kind: 'grade' }
  /** Text, one of `values`, or any text (null). */
  | { name: string; kind: 'text'; values: readonly string[] | null };

/** How a kind reads the settings of its own from a check's entry in the configuration. */
export interface SettingsReader {
  has(key: string): boolean;
  /** The setting's text, trimmed; a missing or empty one is a fault naming the field. */
  text(key: string): string;
  /** The setting as YAML read it (a number, text, ...), for a setting that is not text. */
  value(key: string): unknown;
  /** Refuses the file naming the field `key`, or the check as a whole when `key` is undefined. */
  fail(key: string | undefined, message: string): never;
}

export interface CheckKind<Settings> {
  /** The settings only this kind takes, beside every check's (name, run, every, ...). */
  keys: readonly string[];
  settings(read: SettingsReader): Settings;
  /** The command line of a run against `server`, with --json. */
  args(settings: Settings, server: string): string[];
  figures: readonly Figure[];
  /** The figures of a run from the command's --json, flat, under the names of `figures`; or what is wrong with the JSON. */
  figuresOf(json: Readonly<Record<string, unknown>>): Record<string, unknown> | string;
  /** Whether a command that exited non-zero printed a run all the same (dns: an NXDOMAIN is an answer). */
  answeredDespiteExit?(json: Readonly<Record<string, unknown>>): boolean;
  /** The bytes a run moved from the server (down) and to it (up), from the command's --json; none for a kind whose report does not say. */
  bytesOf?(json: Readonly<Record<string, unknown>>): { down: number; up: number } | null;
}

/** A number figure. */
export const numberFigure = (name: string, unit: string): Figure => ({ name, kind: 'number', unit });

/** A JSON object's value as an object, or an empty one: the command's output is read, never trusted to be whole. */
export const objectOf = (value: unknown): Readonly<Record<string, unknown>> => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {});

/** A finite number, or null. */
export const finiteOrNull = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);
