// Finds the installed package's root (where package.json, runtime/ and
// samples/ live), whether this code runs from dist/ or from the sources.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

function findRoot(start: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'cc-memwrap') {
      return dir;
    }
    if (path.dirname(dir) === dir) throw new Error(`cannot find the cc-memwrap package above ${start}`);
  }
}

export const packageRoot = findRoot(path.dirname(fileURLToPath(import.meta.url)));
