// Builds the renderer (plain browser code: no Node) into dist/gui/renderer, with relative asset paths so the same build loads from the local server and from Electron's app protocol.
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root: here,
  base: './',
  logLevel: 'warn',
  build: {
    outDir: fileURLToPath(new URL('../../dist/gui/renderer', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    // Nothing inlined as data: URLs beyond what the CSP allows for images.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    chunkSizeWarningLimit: 2000,
    // The viewer, the page of `cc-memwrap view A --compare B`, and the lanes of `cc-memwrap view A B C…`.
    rollupOptions: {
      input: {
        index: fileURLToPath(new URL('./index.html', import.meta.url)),
        compare: fileURLToPath(new URL('./compare.html', import.meta.url)),
        lanes: fileURLToPath(new URL('./lanes.html', import.meta.url)),
      },
    },
  },
  worker: { format: 'es' },
});
