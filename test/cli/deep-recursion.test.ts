// A recursion 9,000 and 30,000 calls deep (test/fixtures/scenarios.ts, deepRecursionTrace): nothing that reads it may
// recurse as deep as the program did, nor write out every path whole. `report` (text and --json, every section),
// `report --html` whole and through the index, `export --format folded` (every metric) and `speedscope`, and the
// viewer's backend (the index's detail and call stack at the deepest event, the panels' data) all finish, each
// command within a 256 MiB JavaScript heap, and the call-path exports are cut at MAX_PATH_DEPTH frames with every
// byte still counted and a note saying so.
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { packageRoot } from '../../package-root.js';
import { DEEPER_FRAMES, MAX_PATH_DEPTH } from '../../analysis/call-paths.js';
import { TraceSession } from '../../host/trace-session.js';
import { indexDetail, indexPanelsText } from '../../host/index-api.js';
import { deepRecursionTrace } from '../fixtures/scenarios.js';
import { scratch } from '../support/programs.js';

const main = path.join(packageRoot, 'dist', 'bin', 'main.js');
const dir = scratch('deep-recursion');

/** The command through the compiled CLI, its JavaScript heap held to 256 MiB. */
function run(args: string[], env: Record<string, string> = {}): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, ['--max-old-space-size=256', main, ...args], {
    cwd: dir,
    encoding: 'utf8',
    maxBuffer: 1 << 30,
    env: { ...process.env, MEMWRAP_READ_WORKER: '0', ...env },
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe.each([9_000, 30_000])('a recursion %i calls deep', (depth) => {
  const trace = path.join(dir, `deep-${depth}.mwtrace`);
  const allocated = 16 * depth + 1000;

  beforeAll(() => writeFileSync(trace, deepRecursionTrace(depth).build()));

  test('report, every section, as text and as JSON', () => {
    const sections = ['--by', 'function', '--peak', '--linked', '--leaks', '--temporary', '--stack', '--leak-causes', '--calls', 'down', '--interval', '100'];
    const text = run(['report', trace, ...sections]);
    expect(text.stderr).toBe('');
    expect(text.status).toBe(0);
    expect(text.stdout).toContain(`Events       ${(4 * depth + 5).toLocaleString('en-US')}`);
    const json = run(['report', trace, '--json', ...sections]);
    expect(json.status).toBe(0);
    const r = JSON.parse(json.stdout) as { peakStack: { bytes: number }; bytesAllocated: { requested: number } };
    expect(r.peakStack.bytes).toBe(64 + 48 * depth);
    expect(r.bytesAllocated.requested).toBe(allocated);
  });

  test.each(['allocated', 'count', 'peak', 'leaked', 'stack'])('export --format folded --metric %s: paths cut at the depth limit, every byte counted', (metric) => {
    const r = run(['export', trace, '--format', 'folded', '--metric', metric]);
    expect(r.status).toBe(0);
    expect(r.stderr).toContain(`call paths deeper than ${MAX_PATH_DEPTH} frames are cut there: the ${(depth + 1 - MAX_PATH_DEPTH).toLocaleString('en-US')} frames entered below`);
    const lines = r.stdout.trimEnd().split('\n');
    const frames = lines.map((l) => l.slice(0, l.lastIndexOf(' ')).split(';'));
    const values = lines.map((l) => Number(l.slice(l.lastIndexOf(' ') + 1)));
    expect(Math.max(...frames.map((f) => f.length))).toBe(MAX_PATH_DEPTH + 1);
    expect(frames.some((f) => f[f.length - 1] === DEEPER_FRAMES)).toBe(true);
    const sum = values.reduce((a, b) => a + b, 0);
    if (metric === 'allocated') expect(sum).toBe(allocated);
    if (metric === 'count') expect(sum).toBe(depth + 1);
    if (metric === 'peak') expect(sum).toBe(allocated);
    if (metric === 'leaked') expect(sum).toBe(1000);
    // The folded frame keeps the deepest stack of all the frames it holds.
    if (metric === 'stack') expect(Math.max(...values)).toBe(64 + 48 * depth);
  });

  test('export --format speedscope: every profile whole, no sample deeper than the limit', () => {
    const r = run(['export', trace, '--format', 'speedscope']);
    expect(r.status).toBe(0);
    const file = JSON.parse(r.stdout) as { profiles: { name: string; samples: number[][]; weights: number[]; endValue: number }[] };
    expect(file.profiles.find((p) => p.name === 'heap: bytes allocated')!.endValue).toBe(allocated);
    expect(file.profiles.find((p) => p.name === 'heap: leaked at the end')!.endValue).toBe(1000);
    for (const p of file.profiles) for (const s of p.samples) expect(s.length).toBeLessThanOrEqual(MAX_PATH_DEPTH + 1);
  });

  test.each([
    ['whole', '0'],
    ['through the index', '1'],
  ])('report --html, the trace read %s', (_, index) => {
    const html = path.join(dir, `deep-${depth}-${index}.html`);
    const r = run(['report', trace, '--html', html], { MEMWRAP_VIEW_INDEX: index });
    expect(r.stderr).toContain(`wrote ${html}`);
    expect(r.status).toBe(0);
    expect(readFileSync(html, 'utf8')).toContain('</html>');
  });

  describe("the viewer's backend", () => {
    let session: TraceSession;
    beforeAll(async () => {
      session = await TraceSession.open(trace, { index: true, cacheDir: path.join(dir, `deep-${depth}.mwcache`) });
      // The events indexed (the detail reads them), after the summaries.
      await session.index();
    }, 120_000);

    test('the deepest event: its detail, and a call stack of every frame open there', async () => {
      const deepest = 2 * depth;
      const r = await indexDetail(session, String(deepest));
      expect(r.detail.kind).toBe('ENTER');
      expect(r.stack.length).toBe(depth + 1);
      expect(r.stack[0]!.function).toBe('down');
      expect(r.stack[depth]!.function).toBe('main');
    });

    test("the panels' data: the flame graph cut at the depth limit", async () => {
      let text = indexPanelsText(session);
      // The first request starts the computation; it says how far it is until the data is ready.
      await expect.poll(() => (text = indexPanelsText(session)).startsWith('{"state":"ready"'), { timeout: 120_000, interval: 100 }).toBe(true);
      const panels = JSON.parse(text) as { panels: { extras: { flame: { root: FlameLike } } } };
      let deepestNode = 0;
      const todo: [FlameLike, number][] = [[panels.panels.extras.flame.root, 0]];
      while (todo.length > 0) {
        const [n, d] = todo.pop()!;
        deepestNode = Math.max(deepestNode, d);
        for (const c of n.children) todo.push([c, d + 1]);
      }
      expect(deepestNode).toBe(MAX_PATH_DEPTH + 1);
    });
  });
});

interface FlameLike {
  name: string;
  children: FlameLike[];
}
