// Every lesson typed as its text shows it, as a teacher would in front of a class: the `console` blocks of each
// samples/*.md, in the order of samples/README.md's table (then the other texts: MPI where it is installed), all in
// one folder, run by the docs check's runner (test/support/doc-commands.ts) and printing what the text shows. Then
// all of them once more in the same folder, a class's second go, where every command must still end as the text
// says (its output then names more traces, so only the exit statuses are compared).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkBlock, makeScratch, readCommandBlocks, runDocCommand, type DocBlock, type Scratch } from '../support/doc-commands.js';
import { haveCommand, notX86_64Glibc, skipAllWhen } from '../support/machine.js';
import { run, samplesDir } from '../support/programs.js';
import { noFirmware } from '../support/firmware.js';

const gccMajor = Number(run('gcc', ['-dumpversion']).stdout.trim().split('.')[0]);
/** The texts show gcc 12's frame sizes and glibc's chunk sizes on x86-64. */
const cannotReproduce = notX86_64Glibc ?? (gccMajor === 12 ? null : `the lessons show gcc 12's frame sizes; this is gcc ${gccMajor}`);
const mpi = haveCommand('mpicc') && haveCommand('mpiexec');
if (!mpi) console.log('test/e2e/lessons-typed.test.ts: no mpicc and mpiexec here, so samples/mpi-ring.md is not typed');
/** Lesson 8 is built for a board and run under QEMU (test/e2e/lesson-board.test.ts checks its numbers too). */
const boardLesson = 'sensor-log.md';
if (noFirmware !== null) console.log(`test/e2e/lessons-typed.test.ts: ${noFirmware}, so samples/${boardLesson} is not typed`);

/** The lessons in the order of samples/README.md's table, then the other texts. */
function lessonTexts(): string[] {
  const index = readFileSync(path.join(samplesDir, 'README.md'), 'utf8');
  const lessons = [...index.matchAll(/^\| \d+\. .*? \| .*? \| `([\w-]+\.md)` \|/gm)].map((m) => m[1]!);
  return [...lessons.filter((t) => t !== boardLesson || noFirmware === null), ...(mpi ? ['mpi-ring.md'] : [])];
}

describe('every lesson typed top to bottom in one folder', () => {
  skipAllWhen(cannotReproduce);
  const texts = lessonTexts();
  const blocks: DocBlock[] = texts.flatMap((t) => readCommandBlocks(path.join(samplesDir, t)));
  let scratch: Scratch | undefined;

  it('the texts are the seven lessons, each with commands to type', () => {
    expect(texts.slice(0, 7)).toEqual(['linked-list.md', 'recursion.md', 'error-path-leak.md', 'realloc-growth.md', 'pool.md', 'ring-buffer.md', 'struct-padding.md']);
    for (const t of texts) expect(readCommandBlocks(path.join(samplesDir, t)).length).toBeGreaterThan(0);
  });

  for (const block of blocks) {
    it(`${block.file}:${block.line} prints what the text shows`, () => {
      scratch ??= makeScratch(['samples']);
      expect(checkBlock(block, scratch).join('\n\n')).toBe('');
    }, 600_000);
  }

  it('typed a second time in the same folder, every command ends as the text says', () => {
    expect(scratch).toBeDefined();
    const wrong: string[] = [];
    for (const block of blocks) {
      for (const command of block.commands) {
        const ran = runDocCommand(command, scratch!);
        if (ran.status !== command.status) wrong.push(`${block.file}:${command.line}: $ ${command.command}\nexit status ${ran.status}, the text shows ${command.status}:\n${ran.output.slice(0, 8).join('\n')}`);
      }
    }
    expect(wrong.join('\n\n')).toBe('');
  }, 900_000);
});
