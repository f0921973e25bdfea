// Test runner settings: the suites compile and run real C programs, so they
// get generous timeouts and run one file per worker.
import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The real-world suite has its own config and command (npm run test:real).
    exclude: [...configDefaults.exclude, 'test/real/**'],
    testTimeout: 120_000,
    hookTimeout: 300_000,
    // Each file's scratch directories go once its tests have run (kept when one failed).
    setupFiles: ['test/support/scratch-cleanup.ts'],
    globalSetup: ['test/support/node-polyfills.ts'],
  },
});
