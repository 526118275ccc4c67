import { defineConfig } from 'vitest/config';

// Suites whose figures depend on having the machine to themselves (the speed test on shaped
// links, packet loss through a lossy relay): one file at a time, as `npm test`'s last step or
// alone. `npm run test:timed` runs CI's representative set, `npm run test:timed:full` every case
// (NETDIAG_TIMED=full; test/support/timed-set.ts and docs/testing.md say which is which).
export default defineConfig({
  test: {
    include: ['test/timed/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 60_000,
    pool: 'forks',
    fileParallelism: false,
    setupFiles: ['test/support/setup.ts'],
  },
});
