// Habits of the code that a type-checker and a linter do not see (docs/design.md, "Habits"): a doc
// comment stands directly above what it documents, so one followed by another doc comment has
// lost its subject (a function moved, a constant removed) and says nothing where it stands.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '..');

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
});
