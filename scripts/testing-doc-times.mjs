// node scripts/testing-doc-times.mjs: writes each Node suite's time in docs/testing.md from the
// last run's test-results/file-times.json (test/support/file-times-reporter.ts, written by
// `npm test` or `npx vitest run`), each file whole: import, hooks and tests. The run starts the
// suites longest first by these times (test/support/sequencer.ts), so keep them current when a
// suite's time moves by much. Rows naming several files, and files the run did not time, are left.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(fileURLToPath(new URL('.', import.meta.url)), '..');
const docPath = join(root, 'docs', 'testing.md');
const times = new Map(JSON.parse(readFileSync(join(root, 'test-results', 'file-times.json'), 'utf8')).map((t) => [t.file, t.seconds]));

/** As the doc writes a time: "< 1 s", "37 s", "3 min". */
const written = (seconds) => (seconds < 1 ? '< 1 s' : seconds < 120 ? `${String(Math.round(seconds))} s` : `${String(Math.round(seconds / 60))} min`);

let changed = 0;
const lines = readFileSync(docPath, 'utf8')
  .split('\n')
  .map((line) => {
    const cells = line.split('|');
    const file = /^ `([^`*]+\.test\.ts)` $/.exec(cells[1] ?? '')?.[1];
    const seconds = file === undefined ? undefined : times.get(file);
    if (seconds === undefined || cells.length < 4) return line;
    const time = ` ${written(seconds)} `;
    if (cells[cells.length - 2] === time) return line;
    cells[cells.length - 2] = time;
    changed++;
    return cells.join('|');
  });
writeFileSync(docPath, lines.join('\n'));
process.stdout.write(`docs/testing.md: ${String(changed)} times written from test-results/file-times.json\n`);
