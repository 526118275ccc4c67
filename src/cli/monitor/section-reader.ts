// How a section of the monitor's configuration that a module of its own reads (mqtt:, influxdb:,
// budget:, a check's skip_when_busy:) sees the file: its values by path from the section, and a
// fault said with the file's line and the field's whole path (monitor-config.ts).

/** A path within a section: keys and list indexes. */
export type SectionPath = readonly (string | number)[];

export interface SectionReader {
  /** The section's own path in the file (["mqtt"], ["checks", 2, "budget"]), for messages. */
  at: SectionPath;
  has(path: SectionPath): boolean;
  /** The value as YAML read it (a number, text, a list, a map as a plain object), or undefined. */
  value(path: SectionPath): unknown;
  /** The value's text, trimmed; a missing, empty or non-text one is a fault naming the field. */
  text(path: SectionPath): string;
  /** The keys of the map at `path` ([] for the section itself), or a fault when it is not a map. */
  keys(path: SectionPath): string[];
  /** Refuses the file, naming the field at `path` (relative to the section) and its line. */
  fail(path: SectionPath, message: string): never;
}
