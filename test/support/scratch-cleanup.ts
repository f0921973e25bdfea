// Set-up of every test file: once its tests have run, the scratch directories it made (scratch() in programs.ts)
// are removed, so that a full run does not leave gigabytes of programs and traces in the temp dir. A file with a
// failed test keeps them for a look, as CC_MEMWRAP_KEEP_SCRATCH=1 keeps every file's; the failure's message names
// the paths.
import { afterAll, afterEach } from 'vitest';
import { removeScratch } from './programs.js';

let failed = false;

afterEach((context) => {
  if (context.task.result?.state === 'fail') failed = true;
});

// Registered before the file's own hooks, so it runs after them (vitest runs after-hooks in reverse order).
afterAll(() => {
  if (!failed && process.env.CC_MEMWRAP_KEEP_SCRATCH !== '1') removeScratch();
});
