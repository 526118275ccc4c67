// The README's configuration tables read back, so a test can hold them to the code's tables
// (src/runtime/node/adapter/config.ts, src/runtime/workers/adapter/config.ts) and neither can drift. Text only:
// the Node suites read README.md from disk, the workerd suites import it with Vite's `?raw`.
import type { Table } from '../../src/core/config/table.js';

/** The text under `## <heading>`, up to the next second-level heading. */
export function readmeSection(readme: string, heading: string): string {
  const start = readme.indexOf(`\n## ${heading}\n`);
  if (start === -1) throw new Error(`the document has no "## ${heading}" section`);
  const end = readme.indexOf('\n## ', start + 1);
  return readme.slice(start, end === -1 ? undefined : end);
}

/** Variable names written in backticks (`NETDIAG_X`, `PORT`, and patterns such as `NETDIAG_DNS_CACHE_*`). */
export function namesIn(text: string): string[] {
  return [...text.matchAll(/`([A-Z][A-Z0-9_]*\*?)`/g)].map((m) => m[1] ?? '');
}

export interface Row {
  /** The names in the first cell (`PORT`, `HOST` share one row). */
  names: string[];
  /** Every cell after the first, joined: what the row says about them. */
  text: string;
  /** The last cell: the default. */
  default: string;
}

/** The rows of the Markdown tables in `text` whose first cell names variables. */
export function tableRows(text: string): Row[] {
  const rows: Row[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('| `')) continue;
    const cells = line.slice(1, -1).split(' | ').map((c) => c.trim());
    rows.push({ names: namesIn(cells[0] ?? ''), text: cells.slice(1).join(' | '), default: cells.at(-1) ?? '' });
  }
  return rows;
}

/** Names, with `PREFIX*` patterns replaced by the names of `known` they match. */
export function expand(names: readonly string[], known: readonly string[]): string[] {
  return names.flatMap((name) => (name.endsWith('*') ? known.filter((k) => k.startsWith(name.slice(0, -1))) : [name]));
}

/** How a default the README can state is written there: numbers and words as-is, on/off for booleans. */
function shownDefault(value: unknown): string | undefined {
  if (typeof value === 'number' || typeof value === 'string') return `\`${String(value)}\``;
  if (typeof value === 'boolean') return value ? '`on`' : '`off`';
  return undefined;
}

export interface Exceptions {
  /** Read by the code, and documented outside these rows (said by the caller where). */
  elsewhere?: readonly string[];
  /** In the rows, but read by something else than the table (Node's own `NODE_EXTRA_CA_CERTS`). */
  notOurs?: readonly string[];
}

/**
 * Where a README table and a code table disagree, one line each: a variable the README does not
 * list, one it lists that the code does not read, a bound or a default the README does not state.
 */
export function drift(table: Table, rows: readonly Row[], except: Exceptions = {}): string[] {
  const problems: string[] = [];
  const byName = new Map(rows.flatMap((row) => row.names.map((name) => [name, row] as const)));
  for (const [name, row] of Object.entries(table)) {
    const doc = byName.get(name);
    if (doc === undefined) {
      if (!(except.elsewhere ?? []).includes(name)) problems.push(`${name} is read but not in the README's table`);
      continue;
    }
    const bounds = row.parse.bounds;
    if (bounds !== undefined && !doc.text.includes(`${String(bounds.min)}..${String(bounds.max)}`)) {
      problems.push(`${name}: the README does not state its bounds ${String(bounds.min)}..${String(bounds.max)}`);
    }
    const shown = shownDefault(row.default);
    // A row shared by two variables (`PORT`, `HOST`) states both their defaults in its last cell.
    if (shown !== undefined && !doc.default.includes(shown)) problems.push(`${name}: the README's default is not ${shown}: "${doc.default}"`);
  }
  for (const name of byName.keys()) if (!(name in table) && !(except.notOurs ?? []).includes(name)) problems.push(`${name} is in the README's table but not read`);
  return problems;
}
