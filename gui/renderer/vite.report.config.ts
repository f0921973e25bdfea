// Builds the renderer for `cc-memwrap report --html` into dist/gui/report: one script (the index worker inlined in it, started from a Blob URL) and one stylesheet, which host/html-report.ts inlines into the report with the trace and its sources.
import { fileURLToPath } from 'node:url';
import { defineConfig, mergeConfig } from 'vite';
import base from './vite.config.js';

export default mergeConfig(
  base,
  defineConfig({
    build: {
      outDir: fileURLToPath(new URL('../../dist/gui/report', import.meta.url)),
      cssCodeSplit: false,
      // The viewer alone (the compare page has a build of its own: vite.report-compare.config.ts).
      rollupOptions: { input: fileURLToPath(new URL('./index.html', import.meta.url)), output: { codeSplitting: false } },
    },
    // A classic worker: Chromium refuses module workers from Blob URLs on a file:// page (its origin is opaque).
    worker: { format: 'iife' },
    resolve: {
      // Each worker's starter (start-worker.ts, start-index-worker.ts) swapped for the one that inlines it.
      alias: [
        { find: /^\.\/start-worker\.js$/, replacement: fileURLToPath(new URL('./src/start-worker-inline.ts', import.meta.url)) },
        { find: /^\.\/start-index-worker\.js$/, replacement: fileURLToPath(new URL('./src/start-index-worker-inline.ts', import.meta.url)) },
      ],
    },
  }),
);
