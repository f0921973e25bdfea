// `report --leak-causes` streams the trace (no decoded model) and says what the whole-model analysis said: real programs
// built with and without --mw-branches, the CLI's JSON member and text section against the reference analysis
// (test/support/leak-causes-reference.ts) of the decoded trace, and the folds over the stream against it in-process.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { leakCausesOf, LEAK_CAUSES_SCHEMA } from '../../analysis/leak-causes.js';
import { renderLeakCauses } from '../../analysis/leak-causes-text.js';
import { memorySource } from '../../analysis/trace/byte-source.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { streamSource } from '../../analysis/trace/resolve-stream.js';
import { sourceLineText } from '../../analysis/peak.js';
import { referenceLeakCauses } from '../support/leak-causes-reference.js';
import { must, programsDir, runTraced, samplesDir, scratch, traceOf, wrapper } from '../support/programs.js';

const PROGRAMS: [name: string, source: string, branches: boolean][] = [
  ['leak-causes', path.join(samplesDir, 'leak-causes.c'), true],
  ['leak-causes-plain', path.join(samplesDir, 'leak-causes.c'), false],
  ['error-path-leak', path.join(samplesDir, 'error-path-leak.c'), true],
  ['leaks', path.join(programsDir, 'leaks.c'), true],
  ['bst', path.join(programsDir, 'bst.c'), true],
  ['linked-list', path.join(samplesDir, 'linked-list.c'), true],
];

const readSource = (file: string): string | null => {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return null;
  }
};

describe('report --leak-causes over the stream gives the whole-model analysis', () => {
  for (const [name, source, branches] of PROGRAMS) {
    it(`${name}${branches ? ' (--mw-branches)' : ''}`, () => {
      const dir = scratch(`leak-stream-${name}`);
      const exe = path.join(dir, name);
      must(wrapper, [...(branches ? ['--mw-branches'] : []), 'gcc', '-O0', source, '-o', exe]);
      const ran = runTraced(exe, [], path.join(dir, 'traces'));
      const trace = traceOf(path.join(dir, 'traces'), ran.pid);
      const bytes = new Uint8Array(readFileSync(trace));
      const model = decodeTrace(bytes);
      const reference = referenceLeakCauses(model);
      if (!branches) expect(reference.branchesRecorded).toBe(false);
      expect(reference.suspects.length + reference.neverFreed.length).toBeGreaterThan(0);
      expect(leakCausesOf(streamSource(memorySource(bytes), { window: 1024 }))).toEqual(reference);

      const json = JSON.parse(must(process.execPath, [wrapper, 'report', '--json', '--leak-causes', trace]).stdout) as { leakCauses: unknown };
      expect(json.leakCauses).toEqual(JSON.parse(JSON.stringify({ schema: LEAK_CAUSES_SCHEMA, ...reference })));
      const text = must(process.execPath, [wrapper, 'report', '--leak-causes', trace]).stdout;
      const section = renderLeakCauses(reference, { top: 10, source: (f, l) => sourceLineText(readSource, f, l), relativeTo: model.program?.cwd || null });
      expect(text.endsWith(section)).toBe(true);
    }, 60_000);
  }
});
