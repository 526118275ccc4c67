// Habits of the code that a type-checker and a linter do not see (docs/design.md, "Habits"): a doc
// comment stands directly above what it documents, so one followed by another doc comment has
// lost its subject (a function moved, a constant removed) and says nothing where it stands; and a
// comment says why, so it names no issue and no date: the history (git log, docs/benchmarks.md)
// tells when and for which issue, and a reader of the code needs the reason, which outlives both.
import { readdirSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');

/** Every file of src/ and web/ (tests beside the sources too), by path from the repository; generated output left out. */
function sourceFiles(extensions: readonly string[]): string[] {
  return ['src', 'web'].flatMap((dir) =>
    readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
      .filter((f) => extensions.includes(extname(f)) && !f.startsWith('generated/'))
      .map((f) => `${dir}/${f}`),
  );
}

/** Each `file:line` where a doc comment ends and, past blank lines, another begins. */
function orphanedDocComments(text: string, file: string): string[] {
  const lines = text.split('\n');
  const found: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]?.trim() ?? '';
    const ends = line === '*/' || (line.startsWith('/**') && line.endsWith('*/'));
    if (!ends) continue;
    let next = i + 1;
    while (next < lines.length && lines[next]?.trim() === '') next++;
    if (lines[next]?.trim().startsWith('/**') === true) found.push(`${file}:${String(i + 1)}`);
  }
  return found;
}

/**
 * The comments of a file, each with the line it starts on: TypeScript's own comment ranges for
 * script (so a `//` inside a string or a URL is not one), `/* *\/` for CSS and `<!-- -->` for HTML.
 */
function commentsOf(text: string, file: string): { line: number; text: string }[] {
  const lineOf = (pos: number): number => text.slice(0, pos).split('\n').length;
  if (file.endsWith('.css')) return [...text.matchAll(/\/\*[\s\S]*?\*\//g)].map((m) => ({ line: lineOf(m.index), text: m[0] }));
  if (file.endsWith('.html')) return [...text.matchAll(/<!--[\s\S]*?-->/g)].map((m) => ({ line: lineOf(m.index), text: m[0] }));
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
  const ranges = new Map<number, ts.CommentRange>();
  const collect = (node: ts.Node): void => {
    for (const range of [...(ts.getLeadingCommentRanges(text, node.getFullStart()) ?? []), ...(ts.getTrailingCommentRanges(text, node.getEnd()) ?? [])]) ranges.set(range.pos, range);
    node.forEachChild(collect);
  };
  collect(source);
  return [...ranges.values()].sort((a, b) => a.pos - b.pos).map((r) => ({ line: lineOf(r.pos), text: text.slice(r.pos, r.end) }));
}

/** An issue cited: `issue 12`, `issues 3 and 4`, `#123` (but a standard's numbered part, `UTS #46`, is a citation of the standard). */
const ISSUE = /\b[Ii]ssues? #?\d+|(?<![A-Z]{2,} |&)#\d+\b/;
/**
 * A date, as of a measurement or a change: YYYY-MM-DD (a timestamp's date, `...T12:00`, or a
 * date with its clock time, `2026-03-29 02:00`, is data an example holds, not a date of record).
 */
const DATE = /\b\d{4}-\d{2}-\d{2}\b(?![T\d-]| \d{2}:\d{2})/;

/** Each `file:line` whose comment cites an issue or a date, with the words that did. */
function historyInComments(text: string, file: string): string[] {
  return commentsOf(text, file).flatMap((comment) => {
    const found = ISSUE.exec(comment.text) ?? DATE.exec(comment.text);
    return found === null ? [] : [`${file}:${String(comment.line + comment.text.slice(0, found.index).split('\n').length - 1)}: ${found[0]}`];
  });
}

describe('habits', () => {
  it('every doc comment of src/ and web/ stands above what it documents, not above another doc comment', () => {
    const files = ['src', 'web'].flatMap((dir) =>
      readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.startsWith('generated/'))
        .map((f) => `${dir}/${f}`),
    );
    expect(files.length).toBeGreaterThan(200);
    expect(files.flatMap((f) => orphanedDocComments(readFileSync(join(root, f), 'utf8'), f))).toEqual([]);
  });

  it('finds a doc comment that lost its subject', () => {
    expect(orphanedDocComments('/** The limit. */\n\n/** The window. */\nconst WINDOW = 60;\n', 'x.ts')).toEqual(['x.ts:1']);
    expect(orphanedDocComments('/** The window. */\nconst WINDOW = 60;\n', 'x.ts')).toEqual([]);
  });

  it('no comment of src/ or web/ cites an issue or a date', () => {
    const files = sourceFiles(['.ts', '.js', '.css', '.html']);
    expect(files.length).toBeGreaterThan(250);
    expect(files.flatMap((f) => historyInComments(readFileSync(join(root, f), 'utf8'), f))).toEqual([]);
  });

  it('finds an issue or a date in a comment, in script, CSS and HTML, and not in code or a standard cited', () => {
    const script = [
      "// The limit (issue 12).",
      "const a = 'issue 3'; // fine",
      "/**",
      " * Measured on 2026-11-23: 41 µs.",
      " */",
      "const b = 2; // see #123",
      "// UTS #46 and RFC 7239, section 4; the file netdiag-2026-11-25-18-00-00.json; at 2020-01-01T00:00:00Z",
      "const url = 'https://example.com/issues/4'; /* issues 3 and 4 */",
    ].join('\n');
    expect(historyInComments(script, 'x.ts')).toEqual(['x.ts:1: issue 12', 'x.ts:4: 2026-11-23', 'x.ts:6: #123', 'x.ts:8: issues 3']);
    expect(historyInComments('a { color: #e6e8eb; }\n/* The tool first (issue 51). */\n', 'x.css')).toEqual(['x.css:2: issue 51']);
    expect(historyInComments('<p>issue 4</p>\n<!-- measured 2026-11-29 -->\n', 'x.html')).toEqual(['x.html:2: 2026-11-29']);
  });
});
