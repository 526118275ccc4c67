import { defineConfig } from 'vitest/config';

// Suites whose figures depend on having the machine to themselves (the speed test on shaped
// links, packet loss through a lossy relay): one file at a time, as `npm test`'s last step or alone by `npm run test:timed`
// (docs/testing.md).
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
