// docs/testing.md is the map of the suites: it must name every test file of test/ (a moved or new
// suite shows up here or fails this), and stay a table a person reads (no line over 200 characters).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { documentedTimes } from './support/sequencer.js';

const root = join(import.meta.dirname, '..');
const doc = readFileSync(join(root, 'docs', 'testing.md'), 'utf8');

describe('docs/testing.md', () => {
  it('names every test file of test/', () => {
    const files = readdirSync(join(root, 'test'), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.test.ts'))
      .map((f) => `test/${f}`);
    expect(files.length).toBeGreaterThan(100);
    expect(files.filter((f) => !doc.includes(`\`${f}\``))).toEqual([]);
  });

  it('names no test file that is not there', () => {
    const named = [...doc.matchAll(/`(test\/[^`*]+\.test\.ts)`/g)].map((m) => m[1] ?? '');
    const missing = named.filter((f) => {
      try {
        readFileSync(join(root, f));
        return false;
      } catch {
        return true;
      }
    });
    expect(missing).toEqual([]);
  });

  it('gives every Node and timed suite of test/ a time the run can order by (test/support/sequencer.ts)', () => {
    const times = documentedTimes(doc);
    const files = readdirSync(join(root, 'test'), { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.test.ts') && !f.startsWith('workers/'))
      .map((f) => `test/${f}`);
    expect(files.filter((f) => !times.has(f))).toEqual([]);
  });

  it('has no line over 200 characters', () => {
    expect(doc.split('\n').filter((line) => line.length > 200)).toEqual([]);
  });
});
