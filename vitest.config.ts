import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'scripts/**/*.test.ts'],
    // The workerd suites run in their own pool (vitest.workers.config.ts, npm run test:workers);
    // test/timed runs alone (npm run test:timed, vitest.timed.config.ts): its figures need the machine.
    exclude: ['test/workers/**', 'test/timed/**', 'node_modules/**'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Suites start real servers on loopback; files run in parallel workers, tests within a file in order.
    pool: 'forks',
    setupFiles: ['test/support/setup.ts'],
  },
});
