// What the viewer's Flame graph and Consumed panels draw.
// The live heap by top allocation site (analysis/consumed.ts), streamed in two passes: at every bucket's end the bands
// add up to the model's live requested heap after that event, and each top band holds the bytes of its site's blocks
// live then (the model's blocks, grouped as the Heap peak panel groups them).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { modelTables } from '../../analysis/model-fold.js';
import { BlockGroups } from '../../analysis/block-groups.js';
import { NONE } from '../../analysis/model.js';
import { consumed } from '../../analysis/consumed.js';
import { CALL_PATH_METRICS, callPaths, flameTree, OTHER_FRAME, PathNode, type FlameNode } from '../../analysis/call-paths.js';
import { allocationsOfCallPath } from '../../analysis/event-sets.js';
import { memorySource } from '../../analysis/trace/byte-source.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { streamSource } from '../../analysis/trace/resolve-stream.js';
import { buildInstrumented, programsDir, runTraced, samplesDir, scratch, traceOf } from '../support/programs.js';

const dir = scratch('consumed');
const traces: Record<string, Uint8Array> = {};

beforeAll(() => {
  for (const [name, file] of [
    ['call-paths', path.join(programsDir, 'call-paths.c')],
    ['linked-list', path.join(samplesDir, 'linked-list.c')],
  ] as const) {
    const exe = path.join(dir, name);
    buildInstrumented('gcc', ['-O0'], [file], exe);
    const out = path.join(dir, `traces-${name}`);
    traces[name] = readFileSync(traceOf(out, runTraced(exe, [], out).pid));
  }
}, 60_000);

describe('consumed: live heap by top site', () => {
  test.each([
    ['call-paths', 2, 7],
    ['call-paths', 8, 1000],
    ['linked-list', 3, 50],
    ['linked-list', 8, 1000],
  ])('%s, %i sites, %i buckets: bands sum to the live heap at each bucket end; each top band is its site’s live blocks', (name, sites, buckets) => {
    const bytes = traces[name]!;
    const model = decodeTrace(bytes);
    const c = consumed(streamSource(memorySource(bytes)), { sites, buckets });
    expect(c.events).toBe(model.events.count);
    expect(c.ends.length).toBe(Math.min(buckets, model.events.count));
    expect(c.ends[c.ends.length - 1]).toBe(model.events.count - 1);
    const width = c.sites.length + 1;
    for (let b = 0; b < c.ends.length; b++) {
      const sum = c.bytes.subarray(b * width, (b + 1) * width).reduce((x, y) => x + y, 0);
      expect(sum, `bucket ${b}`).toBe(model.events.heapRequested[c.ends[b]!]);
    }
    // Each band from the model: the requested bytes of the blocks of its site live after the bucket's last event.
    const groups = new BlockGroups(model);
    const tables = modelTables(model);
    const { blocks } = model;
    const live = (e: number): Map<string, number> => {
      const by = new Map<string, number>();
      for (let k = 0; k < blocks.count && blocks.allocEvent[k]! <= e; k++) {
        if (blocks.freeEvent[k] !== NONE && blocks.freeEvent[k]! <= e) continue;
        const key = groups.siteOfBlock(tables.blocks, k).key;
        by.set(key, (by.get(key) ?? 0) + blocks.requested[k]!);
      }
      return by;
    };
    const most = new Map<string, number>();
    for (let e = 0; e < model.events.count; e++) for (const [k, v] of live(e)) most.set(k, Math.max(most.get(k) ?? 0, v));
    const expected = [...most.entries()].filter(([, v]) => v > 0).sort((x, y) => y[1] - x[1]).slice(0, sites);
    expect(c.sites.map((s) => s.maxBytes)).toEqual(expected.map(([, v]) => v));
    for (const s of c.sites) expect(most.get(s.key)).toBe(s.maxBytes);
    for (let b = 0; b < c.ends.length; b += 7) {
      const at = live(c.ends[b]!);
      c.sites.forEach((s, i) => expect(c.bytes[b * width + i], `bucket ${b}, ${s.key}`).toBe(at.get(s.key) ?? 0));
    }
  });

  test('call-paths.c: the realloc in main holds the most (200 B), then the nodes build makes (120 B)', () => {
    const c = consumed(streamSource(memorySource(traces['call-paths']!)));
    expect(c.sites.map((s) => s.maxBytes)).toEqual([200, 120, 100, 32]);
  });
});

/** Every node below the root with its count of allocations, its own and its callees'. */
function inclusiveCounts(root: PathNode): { node: PathNode; count: number }[] {
  const out: { node: PathNode; count: number }[] = [];
  const visit = (n: PathNode): number => {
    let sum = n.values.count;
    for (const c of n.children.values()) sum += visit(c);
    if (n !== root) out.push({ node: n, count: sum });
    return sum;
  };
  visit(root);
  return out;
}

/** Sums of each metric's own values over a FlameNode tree (the stack's most). */
function totals(n: FlameNode, into = CALL_PATH_METRICS.map(() => 0)): number[] {
  CALL_PATH_METRICS.forEach((m, i) => (into[i] = m === 'stack' ? Math.max(into[i]!, n.values[i]!) : into[i]! + n.values[i]!));
  for (const c of n.children) totals(c, into);
  return into;
}

const countNodes = (n: FlameNode): number => n.children.reduce((k, c) => k + 1 + countNodes(c), 0);

describe('call paths in the flame graph', () => {
  test.each(['call-paths', 'linked-list'])('%s: a frame’s allocations on the chart are as many as the flame graph counts under it', (name) => {
    const bytes = traces[name]!;
    const model = decodeTrace(bytes);
    const paths = callPaths(streamSource(memorySource(bytes)));
    const nodes = inclusiveCounts(paths.root);
    expect(nodes.length).toBeGreaterThanOrEqual(3);
    for (const { node, count } of nodes) expect(allocationsOfCallPath(model, node.path()).length, node.path().join(';')).toBe(count);
  });

  test('call-paths.c: main;build highlights the five nodes new_node made', () => {
    const bytes = traces['call-paths']!;
    const model = decodeTrace(bytes);
    const events = allocationsOfCallPath(model, ['main', 'build']);
    expect([...events].map((e) => model.events.site[e])).toEqual(Array(5).fill(model.events.site[events[0]!]));
  });

  test('a tree over the node limit keeps the heaviest paths and folds the rest into "(other)", totals whole', () => {
    const bytes = traces['linked-list']!;
    const root = callPaths(streamSource(memorySource(bytes))).root;
    const whole = flameTree(root);
    expect(whole.pruned).toBe(0);
    expect(countNodes(whole.root)).toBe(whole.nodes);
    const small = flameTree(root, 2);
    expect(small.nodes).toBe(whole.nodes);
    expect(countNodes(small.root)).toBe(2);
    expect(small.pruned).toBe(whole.nodes - (countNodes(small.root) - 1));
    expect(totals(small.root)).toEqual(totals(whole.root));
    const names: string[] = [];
    const walk = (n: FlameNode): void => n.children.forEach((c) => (names.push(c.name), walk(c)));
    walk(small.root);
    expect(names).toContain(OTHER_FRAME);
    expect(names).toContain('main');
  });
});
