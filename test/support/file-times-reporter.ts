// A vitest reporter that ends a run with the files that took longest, each whole: its import, its
// hooks (a suite's beforeAll that starts Chromium, Knot or a container) and its tests. vitest's
// own reports time the tests alone: the container suite's 6 s there was 45 s here. Every file's
// time goes to test-results/file-times.json; docs/testing.md's times come from there, and its table
// orders the run (test/support/sequencer.ts).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

/** How many of the slowest files the line lists. */
const SHOWN = 15;

export default class FileTimesReporter implements Reporter {
  onTestRunEnd(modules: readonly TestModule[]): void {
    const root = process.cwd();
    const times = modules
      .map((m) => {
        const d = m.diagnostic();
        return { file: m.moduleId.startsWith(root) ? m.moduleId.slice(root.length + 1) : m.moduleId, seconds: (d.prepareDuration + d.setupDuration + d.collectDuration + d.duration) / 1000 };
      })
      .sort((a, b) => b.seconds - a.seconds);
    mkdirSync(join(root, 'test-results'), { recursive: true });
    writeFileSync(join(root, 'test-results', 'file-times.json'), `${JSON.stringify(times, null, 1)}\n`);
    const total = times.reduce((sum, t) => sum + t.seconds, 0);
    const listed = times.slice(0, SHOWN).map((t) => `  ${t.seconds.toFixed(0).padStart(4)} s  ${t.file}`);
    process.stdout.write(`\nThe slowest files, whole (import, hooks and tests; ${total.toFixed(0)} s over all ${String(times.length)}):\n${listed.join('\n')}\n`);
  }
}
