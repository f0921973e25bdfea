// The desktop package holds what the app runs: every file the compiled main process and preload import, followed
// from dist/gui/main/main.js and dist/gui/preload/preload.cjs, is matched by a `files` entry of electron-builder.yml
// (a module left out makes the packaged app fail at start with ERR_MODULE_NOT_FOUND, which no other test would see).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, test } from 'vitest';
import { packageRoot } from '../../package-root.js';

const ENTRIES = ['dist/gui/main/main.js', 'dist/gui/preload/preload.cjs'];

/** The `files` list of electron-builder.yml: one `  - pattern` line each, `!` for exclusions. */
function builderFiles(): string[] {
  const text = readFileSync(path.join(packageRoot, 'electron-builder.yml'), 'utf8');
  const block = text.split('\nfiles:\n')[1];
  if (block === undefined) throw new Error('electron-builder.yml has no files list');
  const lines = block.split('\n');
  const end = lines.findIndex((l) => !/^\s+- /.test(l));
  return lines.slice(0, end < 0 ? lines.length : end).map((l) => l.replace(/^\s+- /, '').replace(/^"(.*)"$/, '$1'));
}

/** Whether `pattern` (a path, `dir/**`, or `**` + `/*.ext`) matches the package-relative `file`. */
function matches(pattern: string, file: string): boolean {
  if (pattern.endsWith('/**')) return file.startsWith(pattern.slice(0, -2));
  if (pattern.startsWith('**/*.')) return file.endsWith(pattern.slice(4));
  return file === pattern;
}

function packaged(file: string, patterns: string[]): boolean {
  const include = patterns.filter((p) => !p.startsWith('!'));
  const exclude = patterns.filter((p) => p.startsWith('!')).map((p) => p.slice(1));
  return include.some((p) => matches(p, file)) && !exclude.some((p) => matches(p, file));
}

/** Every compiled file reachable from the entries through relative imports (static, dynamic, require). */
function importClosure(): string[] {
  const seen = new Set<string>();
  const todo = [...ENTRIES];
  while (todo.length > 0) {
    const file = todo.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const text = readFileSync(path.join(packageRoot, file), 'utf8');
    for (const { fileName } of ts.preProcessFile(text, true, true).importedFiles) {
      if (fileName.startsWith('.')) todo.push(path.posix.normalize(path.posix.join(path.posix.dirname(file), fileName)));
    }
  }
  return [...seen].sort();
}

describe('electron-builder.yml', () => {
  test('packs every module the main process and the preload import', () => {
    for (const entry of ENTRIES) expect(existsSync(path.join(packageRoot, entry)), `${entry}: run npm run build`).toBe(true);
    const closure = importClosure();
    // The main process reaches the host layer and the analysis code, not just gui/.
    expect(closure).toContain('dist/host/trace-session.js');
    expect(closure.filter((f) => !packaged(f, builderFiles()))).toEqual([]);
  });

  test('the matching itself: a file outside every entry, and a source map, are not packed', () => {
    const patterns = builderFiles();
    expect(packaged('dist/gui/main/main.js', patterns)).toBe(true);
    expect(packaged('dist/gui/main/main.js.map', patterns)).toBe(false);
    expect(packaged('dist/cli/report.js', patterns)).toBe(false);
  });
});
