// The benchmark's workloads: how to build each (plainly or through a wrapper)
// and how to run it.
import path from 'node:path';
import { packageRoot } from '../package-root.js';
import { sh, type RunOptions } from './measure.js';
import { sqliteAmalgamation, sqliteWorkload } from './sources.js';

export interface Workload {
  name: string;
  kind: string;
  /** Compiles and links with `cc` (a compiler, or cc-memwrap and a compiler). */
  build: (cc: string[], out: string, options?: RunOptions) => void;
  args: string[];
  stdin?: string;
  /** Libraries the link needs, after the objects. */
  libs: string[];
  /** The functions a user would leave out of call recording (`--mw-no-calls=`): the tiny ones called most. */
  noCalls?: string;
}

export function workloads(): Workload[] {
  const src = (name: string) => path.join(packageRoot, 'bench', 'workloads', name);
  const sqlite = sqliteAmalgamation((line) => console.error(line));
  return [
    { name: 'binary-trees', kind: 'allocation- and call-heavy', build: (cc, out, o) => sh(cc[0]!, [...cc.slice(1), '-O2', src('binary-trees.c'), '-o', out], o), args: ['16'], libs: [] },
    { name: 'lzw', kind: 'compute-bound, small calls', build: (cc, out, o) => sh(cc[0]!, [...cc.slice(1), '-O2', src('lzw.c'), '-o', out], o), args: ['4000000'], libs: [] },
    { name: 'expr-eval', kind: 'call-heavy, tiny functions', build: (cc, out, o) => sh(cc[0]!, [...cc.slice(1), '-O2', src('expr-eval.c'), '-o', out], o), args: ['500000'], libs: [], noCalls: 'peek,advance,is_*,digit_value,reduce,add,subtract,multiply,divide,remainder_of,negate,put_char,next_random,below' },
    { name: 'sort', kind: 'callbacks (qsort, bsearch)', build: (cc, out, o) => sh(cc[0]!, [...cc.slice(1), '-O2', src('sort.c'), '-o', out], o), args: ['200000'], libs: [] },
    {
      name: 'sqlite',
      kind: 'real code base (SQL script)',
      build: (cc, out, o) => sh(cc[0]!, [...cc.slice(1), '-O2', '-DSQLITE_THREADSAFE=0', '-DSQLITE_OMIT_LOAD_EXTENSION', `-I${sqlite}`, path.join(sqlite, 'shell.c'), path.join(sqlite, 'sqlite3.c'), '-o', out, '-lm'], o),
      args: [':memory:'],
      stdin: sqliteWorkload(20000),
      libs: ['-lm'],
    },
  ];
}
