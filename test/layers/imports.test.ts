// The source folders form layers, and every import runs downward or stays in its folder: analysis/ at the bottom
// (pure, shared with the browser), the instrumenter over it, host/ (the Node side of opening a trace) over both, cli/,
// gui/ and bench/ (every benchmark, the viewer's too) side by side over host/, bin/ on top. This test reads every import of every TypeScript file of those
// folders (static, type-only, re-exports and dynamic import()) and lists each one that runs sideways or up.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, test } from 'vitest';
import { packageRoot } from '../../package-root.js';

/**
 * Each layer's rank, lowest first. A file may import files of its own layer and of any layer of a lower rank; two
 * layers of one rank (cli/, gui/ and bench/) do not import each other. Keys are top-level folders, or files
 * at the top level.
 */
const RANK: Record<string, number> = {
  'package-root.ts': 0,
  analysis: 0,
  runtime: 0,
  instrumenter: 1,
  host: 2,
  bench: 3,
  cli: 3,
  gui: 3,
  bin: 4,
};

const SOURCE = /\.(ts|cts|mts)$/;

/** Every TypeScript file under `dir` (relative to the package root), without node_modules or build output. */
function sourceFiles(rel: string): string[] {
  const abs = path.join(packageRoot, rel);
  if (!statSync(abs, { throwIfNoEntry: false })) return [];
  if (statSync(abs).isFile()) return SOURCE.test(rel) ? [rel] : [];
  return readdirSync(abs, { withFileTypes: true }).flatMap((d) =>
    d.name === 'node_modules' || d.name === 'dist' ? [] : sourceFiles(path.join(rel, d.name)),
  );
}

/** The layer a package-relative path belongs to: its top-level folder, or the file itself at the top. */
function layerOf(rel: string): string {
  return rel.split(path.sep)[0]!;
}

interface Edge {
  from: string;
  to: string;
}

/** The relative imports of one file, resolved to package-relative paths of the imported source (".js" → ".ts"). */
function importsOf(rel: string): Edge[] {
  const text = readFileSync(path.join(packageRoot, rel), 'utf8');
  // readImportFiles and detectJavaScriptImports: also `import type`, `export … from`, import() and require().
  const found = ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName);
  return found
    .filter((spec) => spec.startsWith('.'))
    .map((spec) => {
      const target = path.relative(packageRoot, path.resolve(path.dirname(path.join(packageRoot, rel)), spec));
      return { from: rel, to: target.replace(/\.js$/, '.ts').replace(/\.cjs$/, '.cts').replace(/\.mjs$/, '.mts') };
    });
}

/** Why `edge` breaks the layering, or null when it runs down or stays inside its layer. */
function violation(edge: Edge): string | null {
  const from = layerOf(edge.from);
  const to = layerOf(edge.to);
  if (from === to) return null;
  const rankFrom = RANK[from];
  const rankTo = RANK[to];
  if (rankTo === undefined) return `${edge.from} imports ${edge.to}, outside every source layer`;
  if (rankFrom === undefined) return `${edge.from} is in no layer`;
  if (rankTo < rankFrom) return null;
  return `${edge.from} imports ${edge.to}: ${from}/ ${rankTo === rankFrom ? 'sits beside' : 'sits below'} ${to}/`;
}

function allEdges(): Edge[] {
  return Object.keys(RANK).flatMap(sourceFiles).flatMap(importsOf);
}

describe('the import graph of the source folders', () => {
  const edges = allEdges();

  test('is read: the scan finds the files and the imports it must (else the check below would pass on nothing)', () => {
    const files = new Set(edges.map((e) => e.from));
    expect(files.size).toBeGreaterThan(60);
    // One import of each form the reader must see: static, type-only, and dynamic (bin/main.ts loads subcommands with import()).
    expect(edges).toContainEqual({ from: path.join('cli', 'report.ts'), to: path.join('analysis', 'report.ts') });
    expect(edges).toContainEqual({ from: path.join('gui', 'renderer', 'src', 'backend.ts'), to: path.join('host', 'session-types.ts') });
    expect(edges).toContainEqual({ from: path.join('bin', 'main.ts'), to: path.join('cli', 'report.ts') });
  });

  test('has no edge sideways or up: no gui/ ↔ cli/, nothing from host/ into cli/ or gui/, nothing from analysis/ or the instrumenter upward', () => {
    expect(edges.map(violation).filter((v) => v !== null)).toEqual([]);
  });

  test('the rule itself refuses the edges it is meant to refuse', () => {
    const refused = [
      ['gui/main/ipc.ts', 'cli/io.ts'],
      ['cli/view.ts', 'gui/host/server.ts'],
      ['host/trace-session.ts', 'cli/io.ts'],
      ['host/trace-session.ts', 'gui/main/ipc.ts'],
      ['analysis/summary.ts', 'host/trace-file.ts'],
      ['analysis/summary.ts', 'instrumenter/sites.ts'],
      ['instrumenter/driver.ts', 'host/stack-info.ts'],
      ['analysis/summary.ts', 'package-root.ts'],
    ];
    for (const [from, to] of refused) expect(violation({ from: path.normalize(from!), to: path.normalize(to!) }), `${from} → ${to}`).not.toBeNull();
    expect(violation({ from: path.normalize('cli/report.ts'), to: path.normalize('host/trace-file.ts') })).toBeNull();
    expect(violation({ from: path.normalize('gui/main/ipc.ts'), to: path.normalize('host/trace-session.ts') })).toBeNull();
  });

  test('the renderer reaches no Node module: every file it imports, directly or not, runs in a browser', () => {
    const renderer = sourceFiles(path.join('gui', 'renderer', 'src'));
    const byFile = new Map<string, string[]>();
    for (const e of edges) byFile.set(e.from, [...(byFile.get(e.from) ?? []), e.to]);
    const seen = new Set<string>();
    const todo = [...renderer];
    while (todo.length > 0) {
      const f = todo.pop()!.replace(/\?.*$/, ''); // Vite's `?worker&inline` imports name a file too
      if (seen.has(f)) continue;
      seen.add(f);
      todo.push(...(byFile.get(f) ?? []));
    }
    expect(seen.has(path.join('analysis', 'trace', 'decode.ts'))).toBe(true);
    const nodeImports = [...seen].flatMap((f) =>
      ts.preProcessFile(readFileSync(path.join(packageRoot, f), 'utf8'), true, true).importedFiles
        .map((i) => i.fileName)
        .filter((spec) => spec.startsWith('node:'))
        .map((spec) => `${f} imports ${spec}`),
    );
    expect(nodeImports).toEqual([]);
  });
});
