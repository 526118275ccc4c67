// The order the Node suites start in: longest first, by the times docs/testing.md gives them.
// vitest orders a clean clone's files by size, having no timings of its own yet, so CI started
// the 88 s axe suite (53 lines) last and ran it alone for over a minute at the end
// (docs/testing.md, "How long"). Started first, the long suites overlap each other and the
// short ones fill in beside them. A file the table gives no time keeps vitest's order after
// those it does.
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** "2 min", "107 s", "< 1 s" in seconds; undefined for anything else. */
export function secondsOf(text: string): number | undefined {
  const cell = text.trim();
  if (cell.startsWith('<')) return 0;
  const match = /^([0-9]+(?:\.[0-9]+)?) (s|min)$/.exec(cell);
  if (match === null) return undefined;
  return Number(match[1]) * (match[2] === 'min' ? 60 : 1);
}

/** Each test file the doc's tables name alone in their first cell, with the time in their last. */
export function documentedTimes(doc: string): Map<string, number> {
  const times = new Map<string, number>();
  for (const line of doc.split('\n')) {
    const cells = line.split('|').map((cell) => cell.trim());
    // | `file` | what | needs | time |: the empty cells are the line's ends.
    if (cells.length < 4) continue;
    const file = /^`([^`*]+\.test\.ts)`$/.exec(cells[1] ?? '')?.[1];
    const seconds = secondsOf(cells[cells.length - 2] ?? '');
    if (file !== undefined && seconds !== undefined) times.set(file, seconds);
  }
  return times;
}

export default class DocumentedTimesSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root;
    const times = documentedTimes(readFileSync(join(root, 'docs', 'testing.md'), 'utf8'));
    const byVitest = await super.sort(files);
    const timeOf = (spec: TestSpecification) => times.get(relative(root, spec.moduleId)) ?? -1;
    // Array.prototype.sort is stable: files of equal time keep vitest's order.
    return [...byVitest].sort((a, b) => timeOf(b) - timeOf(a));
  }
}
