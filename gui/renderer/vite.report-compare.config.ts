// Builds the compare page for `cc-memwrap report A --compare B --html` into dist/gui/report-compare: as the viewer's
// report build (one script with the decoding worker inlined, one stylesheet, vite.report.config.ts), from compare.html;
// host/html-report.ts inlines them into the report with both traces and their sources.
import { fileURLToPath } from 'node:url';
import { defineConfig, mergeConfig } from 'vite';
import report from './vite.report.config.js';

export default mergeConfig(
  report,
  defineConfig({
    build: {
      outDir: fileURLToPath(new URL('../../dist/gui/report-compare', import.meta.url)),
      rollupOptions: { input: fileURLToPath(new URL('./compare.html', import.meta.url)) },
    },
  }),
);
