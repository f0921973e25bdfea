// `--only readers`: the speed checks the tests no longer make (no test asserts a time), as ratios to a linear baseline
// measured beside them in the same run: decoding a trace into the model, and the interval series over the model,
// against one pass of the streaming resolver over the same bytes; rewriting a megabyte unit of multibyte text against
// parsing it alone. A ratio that grows with the input's size is an accidental quadratic.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { decodeTrace } from '../analysis/trace/decode.js';
import { memorySource } from '../analysis/trace/byte-source.js';
import { streamSource } from '../analysis/trace/resolve-stream.js';
import { intervalSeries } from '../analysis/timeline.js';
import { rewriteTranslationUnit } from '../instrumenter/rewrite.js';
import { withTree } from '../instrumenter/parser.js';
import { packageRoot } from '../package-root.js';
import { median, sh } from './measure.js';

const wrapper = path.join(packageRoot, 'bin', 'cc-memwrap');

/** Seconds `work` takes, once. */
function seconds(work: () => unknown): number {
  const t0 = process.hrtime.bigint();
  work();
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

/** A unit of `n` functions with multibyte string literals, as the rewriter's big-unit test has it (about 0.9 MB at 5,000). */
function bigUnit(n: number): string {
  const parts = ['# 1 "big.c"\n'];
  for (let i = 0; i < n; i++) {
    parts.push(
      `static const char *s${i} = "日本語 ${i}";\n` +
        `static int f${i}(int x)\n{\n  char *p = (char *)malloc(16);\n  if (x > ${i}) {\n    free(p);\n    return x;\n  }\n  free(p);\n  return x + ${i} + (int)s${i}[0];\n}\n`,
    );
  }
  return parts.join('');
}

/** The table, `runs` rounds alternating the baseline and the measured work. */
export function readersTable(work: string, runs: number): void {
  const exe = path.join(work, 'readers-binary-trees');
  sh(wrapper, ['gcc', '-O2', path.join(packageRoot, 'bench', 'workloads', 'binary-trees.c'), '-o', exe]);
  const rows: string[] = [];
  for (const depth of [10, 12]) {
    const trace = path.join(work, `readers-${depth}.mwtrace`);
    sh(exe, [String(depth)], { env: { ...process.env, MEMWRAP_TRACE: trace } });
    const bytes = new Uint8Array(readFileSync(trace));
    const times = { stream: [] as number[], decode: [] as number[], intervals: [] as number[] };
    let events = 0;
    for (let r = 0; r < runs; r++) {
      times.stream.push(seconds(() => (events = streamSource(memorySource(bytes)).run(() => []).events)));
      let model = null as ReturnType<typeof decodeTrace> | null;
      times.decode.push(seconds(() => (model = decodeTrace(bytes))));
      times.intervals.push(
        seconds(() => {
          intervalSeries(model!, { every: 1000, unit: 'events' });
          intervalSeries(model!, { every: 1e5, unit: 'time' });
          intervalSeries(model!, { every: 1, unit: 'events' });
        }),
      );
    }
    const s = median(times.stream);
    rows.push(`| binary-trees ${depth}: ${events.toLocaleString('en-US')} events | one pass of the resolver | ${(s * 1000).toFixed(0)} ms | decode ${(median(times.decode) / s).toFixed(2)}× | three interval series ${(median(times.intervals) / s).toFixed(2)}× |`);
  }
  for (const n of [1000, 5000]) {
    const text = bigUnit(n);
    const times = { parse: [] as number[], rewrite: [] as number[] };
    for (let r = 0; r < runs; r++) {
      times.parse.push(seconds(() => withTree(text, (t) => t.rootNode.childCount)));
      times.rewrite.push(seconds(() => rewriteTranslationUnit(Buffer.from(text, 'utf8'), { headerPath: '/opt/mw/memwrap.h' })));
    }
    const p = median(times.parse);
    rows.push(`| a unit of ${n.toLocaleString('en-US')} functions, ${(Buffer.byteLength(text) / 1e6).toFixed(2)} MB | parsing it | ${(p * 1000).toFixed(0)} ms | rewrite ${(median(times.rewrite) / p).toFixed(2)}× | |`);
  }
  console.log('\n| input | baseline | baseline (median) | ratio | ratio |');
  console.log('| --- | --- | --- | --- | --- |');
  for (const r of rows) console.log(r);
}
