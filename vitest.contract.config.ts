import { defineConfig } from 'vitest/config';

// The in-process suites (docs/testing.md): the whole HTTP contract through the core's fetch-style
// entry with in-memory ports and fakes, no socket, no root, no system package. `npm test`'s first
// step, and alone as `npm run test:contract`: the loop that runs anywhere in seconds.
export const CONTRACT_SUITES = ['test/contract.test.ts', 'test/app.test.ts'];

export default defineConfig({
  test: {
    include: CONTRACT_SUITES,
    testTimeout: 20_000,
    pool: 'forks',
    setupFiles: ['test/support/setup.ts'],
  },
});
