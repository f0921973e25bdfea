// README.md and docs/*.md as a reader meets them: every `console` block (test/README.md has the convention) is run
// in a scratch folder and must print what the page shows, pids, folders and times masked; every relative link
// leads to a file, and every #anchor to a heading of it. A changed output or a moved section fails here.
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../../package-root.js';
import { checkBlock, makeScratch, normaliseOutput, outputMatches, parseCommandBlocks, readCommandBlocks, type Scratch } from '../support/doc-commands.js';
import { notX86_64Glibc, skipAllWhen } from '../support/machine.js';
import { run } from '../support/programs.js';
import { noFirmware } from '../support/firmware.js';

const pages = ['README.md', ...readdirSync(path.join(packageRoot, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];

const gccMajor = Number(run('gcc', ['-dumpversion']).stdout.trim().split('.')[0]);
/** The pages show gcc 12's frame sizes and glibc's chunk sizes on x86-64. */
const cannotReproduce = notX86_64Glibc ?? (gccMajor === 12 ? null : `the pages show gcc 12's frame sizes; this is gcc ${gccMajor}`);

describe('the console-block runner', () => {
  const page = [
    'Some text.',
    '',
    '```console',
    '$ printf "a\\nb\\n"',
    'a',
    'b',
    '$ echo one; echo two >&2; exit 3',
    'one',
    'two',
    '[3]',
    '```',
    '',
    '```sh',
    '$ not run',
    '```',
    '```console',
    "$ for i in 1 2 3 4; do echo line $i; done",
    'line 1',
    '…',
    'line 4',
    '$ echo first \\',
    '> second',
    'first second',
    '```',
  ].join('\n');

  it('finds the console blocks, their commands, outputs and statuses, and leaves other blocks alone', () => {
    const blocks = parseCommandBlocks(page, 'page.md');
    expect(blocks.map((b) => b.line)).toEqual([3, 16]);
    expect(blocks[0]!.commands).toEqual([
      { command: 'printf "a\\nb\\n"', expected: ['a', 'b'], status: 0, line: 4 },
      { command: 'echo one; echo two >&2; exit 3', expected: ['one', 'two'], status: 3, line: 7 },
    ]);
    expect(blocks[1]!.commands[1]!.command).toBe('echo first \\\nsecond');
  });

  it('passes a page whose commands print what it shows, stderr in order and `…` standing for lines', () => {
    const scratch = makeScratch([]);
    for (const block of parseCommandBlocks(page, 'page.md')) expect(checkBlock(block, scratch)).toEqual([]);
  });

  it('fails a changed output and a changed exit status, naming the page, line and command', () => {
    const changed = page.replace('line 4', 'line 5').replace('[3]', '[4]');
    const scratch = makeScratch([]);
    const problems = parseCommandBlocks(changed, 'page.md').flatMap((block) => checkBlock(block, scratch));
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/^page\.md:7: \$ echo one; echo two >&2; exit 3\nexit status 3, the page shows 4\n/);
    expect(problems[1]).toBe(
      ['page.md:17: $ for i in 1 2 3 4; do echo line $i; done', '- the page, + the command (masked):', '  line 1', '  …', '- line 5', '+ line 2', '+ line 3', '+ line 4'].join('\n'),
    );
  });

  it('masks pids (a trace name, `pid N`, a processes table, a thread id), folders, times and a report file size', () => {
    const page = [
      'Trace        linked-list.3714.mwtrace (format 1.4, 64-bit, pid 3714)',
      'Program      /work/main/.cache/demo/linked-list',
      '       0    3714      13      384 B  no',
      '    pid   ppid  events',
      '  15932  15925      10',
      '  total      34',
      'events 3-205 (540.2 us to 1.5 s): max 2.0 KiB',
      'cc-memwrap report: wrote x.html (320.0 KiB): open it',
      '  4.0 KiB  …est/programs/stress.c:157 edges',
      '    1,000 → 11   -989',
    ];
    const run = [
      'Trace        linked-list.87.mwtrace (format 1.4, 64-bit, pid 87)',
      'Program      /tmp/cc-memwrap-docs-x1/linked-list',
      '       0      87      13      384 B  no',
      '    pid   ppid  events',
      '    101     99      10',
      '  total      34',
      'events 3-205 (612.9 us to 2.0 s): max 2.0 KiB',
      'cc-memwrap report: wrote x.html (321.5 KiB): open it',
      '  4.0 KiB  test/programs/stress.c:157 edges'.replace('test', '…t'),
      '    1,000 → 11   -989',
    ];
    expect(normaliseOutput(page)).toEqual(normaliseOutput(run));
    expect(outputMatches(normaliseOutput(page), normaliseOutput(run.map((l) => l.replace('384 B', '400 B'))))).toBe(false);
    expect(outputMatches(normaliseOutput(page), normaliseOutput(run.map((l) => l.replace('1,000', '1,001'))))).toBe(false);
  });
});

describe('the pages run as shown', () => {
  skipAllWhen(cannotReproduce);
  for (const page of pages) {
    const blocks = readCommandBlocks(path.join(packageRoot, page));
    if (blocks.length === 0) continue;
    describe(page, () => {
      // docs/target.md builds firmware and runs it under QEMU.
      if (page === 'docs/target.md') skipAllWhen(noFirmware);
      // One folder per page, as a reader typing the page top to bottom: later blocks use what earlier ones built.
      let scratch: Scratch | undefined;
      for (const block of blocks) {
        it(`the block at line ${block.line}`, () => {
          scratch ??= makeScratch(['samples', 'test/programs']);
          expect(checkBlock(block, scratch).join('\n\n')).toBe('');
        });
      }
    });
  }
});

/** GitHub's anchor of a heading: lower case, punctuation but `-` and `_` dropped, spaces as `-`. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, '')
    .replace(/ /g, '-');
}

function headingsOf(file: string): Set<string> {
  const text = readFileSync(file, 'utf8').replace(/^```[\s\S]*?^```/gm, '');
  return new Set([...text.matchAll(/^#+ (.*)$/gm)].map((m) => anchorOf(m[1]!)));
}

describe('the pages link to what exists', () => {
  for (const page of pages) {
    it(page, () => {
      const file = path.join(packageRoot, page);
      const text = readFileSync(file, 'utf8').replace(/^```[\s\S]*?^```/gm, '');
      const broken: string[] = [];
      for (const [, link] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(link!)) continue;
        const [target, anchor] = link!.split('#') as [string, string | undefined];
        const resolved = target === '' ? file : path.resolve(path.dirname(file), target);
        if (!existsSync(resolved)) broken.push(`${link}: no such file`);
        else if (anchor !== undefined && resolved.endsWith('.md') && !headingsOf(resolved).has(anchor)) broken.push(`${link}: no such heading`);
      }
      expect(broken).toEqual([]);
    });
  }
});
