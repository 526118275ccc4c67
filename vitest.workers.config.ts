// The workerd suites (README, "Tests"): test/workers/*.test.ts run inside workerd, offline, with
// the Worker's own wrangler.jsonc (Durable Objects, rate-limiting bindings), through
// Cloudflare's vitest plugin. Their peers (Knot behind DoH, a collector, a probe) start in Node.
import { cloudflareTest } from '@cloudflare/vitest-plugin';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  plugins: [
    cloudflareTest({
      wrangler: { configPath: './wrangler.jsonc' },
      // A fixed key for the suites only; a deployment sets its own secret.
      miniflare: { bindings: { NETDIAG_RATE_LIMIT_KEY: 'workerd-suite-key-0123456789abcdef0123456789' } },
    }),
  ],
  test: {
    include: ['test/workers/**/*.test.ts'],
    globalSetup: ['test/workers/global-setup.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
  },
});
