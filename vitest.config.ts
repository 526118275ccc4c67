import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import DocumentedTimesSequencer from './test/support/sequencer.js';
import { CONTRACT_SUITES } from './vitest.contract.config.js';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'scripts/**/*.test.ts'],
    // The workerd suites run in their own pool (vitest.workers.config.ts, npm run test:workers);
    // test/timed runs alone (npm run test:timed, vitest.timed.config.ts): its figures need the machine;
    // the in-process contract runs first, in its own step (npm run test:contract).
    exclude: ['test/workers/**', 'test/timed/**', 'node_modules/**', ...CONTRACT_SUITES],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Suites start real servers on loopback; files run in parallel workers, tests within a file in order.
    pool: 'forks',
    // At least three at once: vitest's default (one less than the cores) is one on a 2-core
    // machine, where most suites wait on peers (npm, podman, Chromium, coturn, a speed test's
    // fixed seconds) more than they compute. On two cores, two at once took 634 s and three 441 s
    // (docs/testing.md, "How long").
    maxWorkers: Math.max(3, availableParallelism() - 1),
    setupFiles: ['test/support/setup.ts'],
    // Longest first, by docs/testing.md's times (test/support/sequencer.ts).
    sequence: { sequencer: DocumentedTimesSequencer },
  },
});
