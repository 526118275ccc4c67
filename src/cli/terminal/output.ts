// How the client commands print: aligned tables for people, the API's `data` as JSON for scripts
// (`--json`), colour only on a terminal and never with NO_COLOR (https://no-color.org). What a
// server chose is never written raw: a cell of a table or pair is escaped (terminal-text.ts).
import { terminalJson, terminalText } from './terminal-text.js';

export interface Output {
  json: boolean;
  colour: boolean;
}

export function outputFor(json: boolean, stream: NodeJS.WriteStream = process.stdout): Output {
  const noColor = process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== '';
  return { json, colour: !json && stream.isTTY && !noColor };
}

const paint = (code: string) => (out: Output, text: string) => (out.colour ? `\u001b[${code}m${text}\u001b[0m` : text);
const bold = paint('1');
const dim = paint('2');

/** Rows of cells as columns padded to the widest cell; the first row is the header. */
export function table(out: Output, rows: string[][]): string {
  rows = rows.map((row) => row.map(terminalText));
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows
    .map((row, r) => {
      const line = row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  ');
      return r === 0 ? bold(out, line.trimEnd()) : line.trimEnd();
    })
    .join('\n');
}

/** `label  value` pairs, labels aligned. */
export function pairs(out: Output, entries: [string, string][]): string {
  const width = Math.max(...entries.map(([label]) => label.length));
  return entries.map(([label, value]) => `${dim(out, label.padEnd(width))}  ${terminalText(value)}`).join('\n');
}

export function print(text: string): void {
  process.stdout.write(`${text}\n`);
}

/** `--json`: indented, exact, and with no control character for a terminal to act on. */
export function printJson(value: unknown): void {
  print(terminalJson(value, 2));
}
