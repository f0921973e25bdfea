// The real-world suite (npm run test:real): real projects fetched from the
// package registries and built by their own build systems. Kept apart from
// the default run for its time; test/real/run.sh installs what it needs.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/real/**/*.test.ts'],
    testTimeout: 900_000,
    hookTimeout: 1_800_000,
    // Each file's scratch directories go once its tests have run (kept when one failed).
    setupFiles: ['test/support/scratch-cleanup.ts'],
    globalSetup: ['test/support/node-polyfills.ts', 'test/real/print-table.ts'],
  },
});
