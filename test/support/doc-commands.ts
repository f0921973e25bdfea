// Runs the command blocks of a Markdown page as a reader would type them and compares what they print with what the
// page shows (a cram-style check), so a changed output fails instead of leaving the page stale.
//
// The convention (test/README.md): a fenced block whose info string is `console` is run; `$ ` starts a command,
// `> ` right after it continues the command on another line, and the lines up to the next command are its output,
// stdout and stderr as one stream. A last output line `[N]` is the exit status (none: 0). A line that is only `…`
// stands for any number of lines. Blocks of one page run in order in one scratch folder, each command in its own
// bash, with `cc-memwrap` on the PATH.
import { spawnSync } from 'node:child_process';
import { closeSync, cpSync, mkdtempSync, openSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { packageRoot } from '../../package-root.js';

export interface DocCommand {
  /** The command as bash gets it (continuation lines joined with newlines). */
  command: string;
  /** The lines the page shows it printing (without the `[N]` line). */
  expected: string[];
  /** The exit status the page shows (`[N]`), 0 when it shows none. */
  status: number;
  /** The page's line of the `$ ` prompt, 1-based. */
  line: number;
}

export interface DocBlock {
  file: string;
  /** The line of the opening fence, 1-based. */
  line: number;
  commands: DocCommand[];
}

/** The `console` blocks of a page, in order. */
export function parseCommandBlocks(markdown: string, file: string): DocBlock[] {
  const lines = markdown.split('\n');
  const blocks: DocBlock[] = [];
  let block: DocBlock | null = null;
  let fence = '';
  lines.forEach((text, index) => {
    if (block === null) {
      const open = /^(\s*)(```+|~~~+)\s*(\S*)/.exec(text);
      if (!open) return;
      if (fence === '') {
        fence = open[2]!;
        if (open[3] === 'console') block = { file, line: index + 1, commands: [] };
      } else if (text.trim() === fence) {
        fence = '';
      }
      return;
    }
    if (text.trim() === fence) {
      blocks.push(finishBlock(block));
      block = null;
      fence = '';
      return;
    }
    addLine(block, text, index + 1);
  });
  if (block !== null) throw new Error(`${file}:${(block as DocBlock).line}: a console block that is never closed`);
  return blocks;
}

function addLine(block: DocBlock, text: string, line: number): void {
  const last = block.commands[block.commands.length - 1];
  if (text.startsWith('$ ')) {
    block.commands.push({ command: text.slice(2), expected: [], status: 0, line });
  } else if (text.startsWith('> ') && last && last.expected.length === 0) {
    last.command += '\n' + text.slice(2);
  } else if (last) {
    last.expected.push(text);
  } else if (text.trim() !== '') {
    throw new Error(`${block.file}:${line}: output before the first \`$ \` command of a console block`);
  }
}

/** Takes a last `[N]` line as the exit status. */
function finishBlock(block: DocBlock): DocBlock {
  for (const command of block.commands) {
    while (command.expected.length > 0 && command.expected[command.expected.length - 1]!.trim() === '') command.expected.pop();
    const status = /^\[(\d+)\]$/.exec(command.expected[command.expected.length - 1] ?? '');
    if (status) {
      command.status = Number(status[1]);
      command.expected.pop();
    }
  }
  return block;
}

/** The blocks of a file on disk, named relative to the package root. */
export function readCommandBlocks(file: string): DocBlock[] {
  return parseCommandBlocks(readFileSync(file, 'utf8'), path.relative(packageRoot, file));
}

/** A number the line shows as a process id: in a trace's name, after `pid`, or in a processes table's pid and ppid
 *  columns. Collected from one command's whole output, then masked wherever it stands (a thread's OS id too). */
function processIds(lines: readonly string[]): Set<string> {
  const ids = new Set<string>();
  let columns: number[] = [];
  for (const line of lines) {
    for (const m of line.matchAll(/(?:^|[./\s])(\d+)\.mwtrace\b|\bpid (\d+)/g)) ids.add((m[1] ?? m[2])!);
    const words = line.trim().split(/\s+/);
    if (words.includes('pid') && words.includes('ppid')) {
      columns = [words.indexOf('pid'), words.indexOf('ppid')];
    } else if (line.trim() === '') {
      columns = [];
    } else if (columns.length > 0 && /^\d+$/.test(words[0] ?? '')) {
      for (const c of columns) if (/^\d+$/.test(words[c] ?? '')) ids.add(words[c]!);
    }
  }
  return ids;
}

/** What varies from run to run and machine to machine, masked; spacing within a line is not compared. */
export function normaliseOutput(lines: readonly string[]): string[] {
  const ids = processIds(lines);
  return lines.map((line) => {
    let text = line;
    for (const id of ids) text = text.replace(new RegExp(`\\b${id}\\b`, 'g'), '<pid>');
    return text
      .replace(/(^|[\s(='"])(\/[^\s/]+)+\//g, '$1<dir>/') // absolute folders: the scratch folder, the package
      .replace(/…\S*\//g, '…/') // a path shortened to fit a column: how much shows depends on the column's width
      .replace(/\b\d+(\.\d+)? ?(ns|us|µs|ms|s)\b/g, '<time>')
      .replace(/\bwrote (\S+) \([^)]*\)/g, 'wrote $1 (<size>)') // a report file's size moves with the viewer's build
      .replace(/\s+/g, ' ')
      .trim();
  });
}

/** Whether the output matches the expected lines, `…` standing for any lines (both already normalised). */
export function outputMatches(expected: readonly string[], actual: readonly string[]): boolean {
  const memo = new Map<number, boolean>();
  const match = (i: number, j: number): boolean => {
    const key = i * (actual.length + 1) + j;
    const known = memo.get(key);
    if (known !== undefined) return known;
    let result: boolean;
    if (i === expected.length) result = j === actual.length;
    else if (expected[i] === '…') result = match(i + 1, j) || (j < actual.length && match(i, j + 1));
    else result = j < actual.length && expected[i] === actual[j] && match(i + 1, j + 1);
    memo.set(key, result);
    return result;
  };
  return match(0, 0);
}

export interface Scratch {
  dir: string;
  env: NodeJS.ProcessEnv;
}

/** A scratch folder holding copies of the package's folders a page's commands use (`samples`, `test/programs` …),
 *  and an environment with `cc-memwrap` from `binDir` first on the PATH and none of the caller's MEMWRAP_ settings
 *  but the runtime's cache. */
export function makeScratch(copy: readonly string[], binDir = path.join(packageRoot, 'bin')): Scratch {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cc-memwrap-docs-'));
  for (const folder of copy) cpSync(path.join(packageRoot, folder), path.join(dir, folder), { recursive: true });
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (name.startsWith('MEMWRAP_') && name !== 'MEMWRAP_CACHE_DIR') continue;
    if (name === 'DISPLAY' || name === 'WAYLAND_DISPLAY') continue;
    env[name] = value;
  }
  return { dir, env: { ...env, PATH: `${binDir}${path.delimiter}${process.env.PATH ?? ''}`, LC_ALL: 'C', TZ: 'UTC' } };
}

export interface CommandRun {
  output: string[];
  status: number;
}

/** Runs one command in the scratch folder, stdout and stderr into one file so their lines keep their order. */
export function runDocCommand(command: DocCommand, scratch: Scratch, timeout = 300_000): CommandRun {
  const file = `${scratch.dir}.output`; // beside the folder, so a command listing it does not see the file
  const fd = openSync(file, 'w');
  let result;
  try {
    result = spawnSync('bash', ['-c', command.command], { cwd: scratch.dir, env: scratch.env, stdio: ['ignore', fd, fd], timeout });
  } finally {
    closeSync(fd);
  }
  if (result.error) throw result.error;
  const signal = result.signal ? os.constants.signals[result.signal] : undefined;
  const text = readFileSync(file, 'utf8');
  const output = text.endsWith('\n') ? text.slice(0, -1).split('\n') : text === '' ? [] : text.split('\n');
  return { output, status: result.status ?? 128 + (signal ?? 0) };
}

/** Runs a block's commands in order; returns one message per command whose output or status differs from the page. */
export function checkBlock(block: DocBlock, scratch: Scratch): string[] {
  const problems: string[] = [];
  for (const command of block.commands) {
    const ran = runDocCommand(command, scratch);
    const expected = normaliseOutput(command.expected);
    const actual = normaliseOutput(ran.output);
    if (outputMatches(expected, actual) && ran.status === command.status) continue;
    const status = ran.status === command.status ? '' : `exit status ${ran.status}, the page shows ${command.status}\n`;
    problems.push(`${block.file}:${command.line}: $ ${command.command}\n${status}- the page, + the command (masked):\n${diffLines(expected, actual).join('\n')}`);
  }
  return problems;
}

/** A line diff of the page's lines against the command's: `  ` both, `- ` the page only, `+ ` the command only (a
 *  longest common subsequence; the page's `…` lines are shown as kept). Outputs are short, so quadratic is fine. */
export function diffLines(expected: readonly string[], actual: readonly string[]): string[] {
  const n = expected.length;
  const m = actual.length;
  const common: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      common[i]![j] = expected[i] === actual[j] ? common[i + 1]![j + 1]! + 1 : Math.max(common[i + 1]![j]!, common[i]![j + 1]!);
    }
  }
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && expected[i] === actual[j]) {
      out.push(`  ${expected[i++]}`);
      j++;
    } else if (i < n && (j === m || common[i + 1]![j]! >= common[i]![j + 1]!)) {
      out.push(expected[i] === '…' ? '  …' : `- ${expected[i]}`);
      i++;
    } else {
      out.push(`+ ${actual[j++]}`);
    }
  }
  return out;
}
