import { defineConfig } from 'vitest/config';

// Suites whose figures depend on having the machine to themselves (the speed test on shaped
// links, packet loss through a lossy relay): one file at a time, as `npm test`'s last step or
// alone. `npm run test:timed` runs CI's representative set, `npm run test:timed:full` every case
// (NETDIAG_TIMED=full; test/support/timed-set.ts and docs/testing.md say which is which).

/**
 * Files of the full run alone: the CLI's packet loss through a lossy relay (its counts are exact,
 * and rarely move); both families and two uplinks, each on shaped paths whose truth alone takes 40 s.
 */
const FULL_ONLY = ['test/timed/turn-loss.test.ts', 'test/timed/family-paths.test.ts', 'test/timed/uplinks.test.ts'];
const full = process.env.NETDIAG_TIMED === 'full';
if (!full) process.stdout.write(`timed set ci: left to npm run test:timed:full: ${FULL_ONLY.join(', ')}\n`);

export default defineConfig({
  test: {
    include: ['test/timed/**/*.test.ts'],
    exclude: full ? [] : FULL_ONLY,
    testTimeout: 20_000,
    hookTimeout: 60_000,
    pool: 'forks',
    fileParallelism: false,
    setupFiles: ['test/support/setup.ts'],
  },
});
