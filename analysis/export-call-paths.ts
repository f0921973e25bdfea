// The call-path tree (call-paths.ts) in formats other tools open: the folded stacks that flame graph tools read
// (`main;insert;new_node 144`, one line per call path with its own value), and speedscope's file format.
import { CALL_PATH_METRICS, type CallPathMetric, type PathNode } from './call-paths.js';

/** Every node below the root, parents before children, children by name (stable output). */
function* walk(root: PathNode): Generator<PathNode> {
  const todo: PathNode[] = [];
  const below = (n: PathNode): void => {
    // One by one, not spread into push(): a node may have more children than a call takes arguments.
    for (const c of [...n.children.values()].sort(byNameDescending)) todo.push(c);
  };
  below(root);
  while (todo.length > 0) {
    const n = todo.pop()!;
    yield n;
    below(n);
  }
}

function byNameDescending(a: PathNode, b: PathNode): number {
  return a.name < b.name ? 1 : a.name > b.name ? -1 : 0;
}

/**
 * One line per call path whose own value for `metric` is not 0: the path's functions joined by ';', a space, the value
 * (and a newline). Lines, not one string: written out one by one, the output has no length limit.
 */
export function* foldedLines(root: PathNode, metric: CallPathMetric): Generator<string> {
  for (const n of walk(root)) {
    const v = n.values[metric];
    if (v !== 0) yield `${n.path().join(';')} ${v}\n`;
  }
}

const PROFILE_NAME: Record<CallPathMetric, string> = {
  allocated: 'heap: bytes allocated',
  count: 'heap: allocations',
  peak: 'heap: live at the peak',
  leaked: 'heap: leaked at the end',
  stack: 'stack: most bytes in use',
};

/**
 * speedscope's file format (https://www.speedscope.app/file-format-schema.json): one sampled profile per metric,
 * each call path a sample weighted by its own value; the frames carry their function's file and line.
 */
export function speedscopeJson(root: PathNode, name: string, exporter: string, metrics: readonly CallPathMetric[] = CALL_PATH_METRICS): string {
  const frames: { name: string; file?: string; line?: number }[] = [];
  const frameOf = new Map<string, number>();
  const frameIndex = (n: PathNode): number => {
    const key = `${n.name}\u0000${n.file ?? ''}\u0000${n.line ?? ''}`;
    let i = frameOf.get(key);
    if (i === undefined) {
      i = frames.length;
      frameOf.set(key, i);
      frames.push(n.file === null ? { name: n.name } : { name: n.name, file: n.file, line: n.line ?? undefined });
    }
    return i;
  };
  const stackOf = (n: PathNode): number[] => {
    const s: number[] = [];
    for (let p: PathNode | null = n; p !== null && p.parent !== null; p = p.parent) s.push(frameIndex(p));
    return s.reverse();
  };
  const profiles = metrics.map((metric) => {
    const samples: number[][] = [];
    const weights: number[] = [];
    for (const n of walk(root)) {
      const v = n.values[metric];
      if (v === 0) continue;
      samples.push(stackOf(n));
      weights.push(v);
    }
    const total = weights.reduce((a, b) => a + b, 0);
    return { type: 'sampled', name: PROFILE_NAME[metric], unit: metric === 'count' ? 'none' : 'bytes', startValue: 0, endValue: total, samples, weights };
  });
  return JSON.stringify({ $schema: 'https://www.speedscope.app/file-format-schema.json', shared: { frames }, profiles, name, activeProfileIndex: 0, exporter }) + '\n';
}
