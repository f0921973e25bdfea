// `npm run demo` (samples/demo.sh) as CI runs it: no display, no terminal. It must end by itself, print the report, and say where the HTML report it wrote is, instead of opening a window.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { packageRoot } from '../../package-root.js';
import { run } from '../support/programs.js';

describe('samples/demo.sh without a display or a terminal', () => {
  // DISPLAY set but stdin and stdout are pipes: still no window (a pipe has nobody to close it).
  for (const env of [{ DISPLAY: '', WAYLAND_DISPLAY: '', CI: '' }, { DISPLAY: ':0', WAYLAND_DISPLAY: '', CI: '' }, { DISPLAY: ':0', CI: 'true' }]) {
    test(`ends by itself and names the HTML report (${JSON.stringify(env)})`, () => {
      const r = run('bash', [path.join(packageRoot, 'samples', 'demo.sh')], { env: { ...process.env, ...env }, timeout: 120_000 });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toContain('first=1 second=4');
      expect(r.stdout).toContain('Frees with a linked set');
      expect(r.stdout).not.toContain('== cc-memwrap view');
      const where = r.stdout.match(/no display here.*\n\s+(\/\S+\.html)\n/);
      expect(where, r.stdout).not.toBeNull();
      const html = readFileSync(where![1]!, 'utf8');
      expect(html).toContain('<script type="application/octet-stream" id="mw-trace">');
      expect(html).toContain('make_node'); // the sample's source, inside the file
    });
  }
});
