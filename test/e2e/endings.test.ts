// Programs that crash, abort, are killed or exit from deep inside leave
// traces that decode up to their last event, and say how the run ended.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { NONE } from '../../analysis/model.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { Kind } from '../../analysis/trace/format.js';
import { buildInstrumented, buildPlain, programsDir, reportJson, run, runTraced, scratch, traceOf } from '../support/programs.js';

const dir = scratch('endings');
const exe = path.join(dir, 'endings');
const plain = path.join(dir, 'endings.plain');

beforeAll(() => {
  buildInstrumented('gcc', ['-O0', '-g'], [path.join(programsDir, 'endings.c')], exe);
  buildPlain('gcc', ['-O0', '-g'], [path.join(programsDir, 'endings.c')], plain);
});

function allocationsAndDeepestFrames(trace: string): { allocs: number; deepFrames: number; errors: string[] } {
  const model = decodeTrace(readFileSync(trace));
  let allocs = 0;
  let deepFrames = 0;
  for (let e = 0; e < model.events.count; e++) {
    if (model.events.kind[e] === Kind.ALLOC && model.blocks.site[model.events.newBlock[e]!] !== 0) allocs++;
    if (model.events.kind[e] === Kind.ENTER) deepFrames++;
  }
  return { allocs, deepFrames, errors: model.problems.filter((p) => p.severity === 'error').map((p) => p.message) };
}

describe.each([
  { how: 'segv', signal: 'SIGSEGV', description: /signal 11 \(SIGSEGV\)/ },
  { how: 'abort', signal: 'SIGABRT', description: /signal 6 \(SIGABRT\)/ },
])('a program that dies of $signal', ({ how, signal, description }) => {
  it('dies exactly as the plain build does and its trace says so', () => {
    const a = run(plain, [how]);
    const traces = path.join(dir, how);
    const b = runTraced(exe, [how], traces);
    expect(a.signal).toBe(signal);
    expect(b.signal).toBe(a.signal);
    expect(b.stdout).toBe(a.stdout);
    const trace = traceOf(traces, b.pid);
    const report = reportJson(trace) as { end: { how: string; signalName: string; description: string } };
    expect(report.end.how).toBe('signal');
    expect(report.end.signalName).toBe(signal);
    expect(report.end.description).toMatch(description);
    const seen = allocationsAndDeepestFrames(trace);
    expect(seen.allocs).toBe(5);
    expect(seen.deepFrames).toBe(1 + 6); // main and deep(5..0)
    expect(seen.errors).toEqual([]);
  });
});

describe('a program killed with SIGKILL', () => {
  it('keeps everything recorded before the kill and says it ended without a trailer', async () => {
    const traces = path.join(dir, 'kill');
    mkdirSync(traces, { recursive: true });
    const child = spawn(exe, ['hang'], { env: { ...process.env, MEMWRAP_TRACE: path.join(traces, '%p.mwtrace') }, stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (chunk: Buffer) => (chunk.toString().includes('ready') ? resolve() : undefined));
      child.on('exit', () => reject(new Error('exited before it was ready')));
    });
    const exited = new Promise((resolve) => child.on('exit', (code, sig) => resolve(sig)));
    child.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    const trace = traceOf(traces, child.pid!);
    const report = reportJson(trace) as { end: { how: string; complete: boolean; description: string } };
    expect(report.end.how).toBe('unknown');
    expect(report.end.complete).toBe(false);
    expect(report.end.description).toMatch(/without a trailer/);
    const seen = allocationsAndDeepestFrames(trace);
    expect(seen.allocs).toBe(5);
    expect(seen.deepFrames).toBe(1 + 6);
    expect(seen.errors).toEqual([]);
  });
});

describe('exit(3) from six frames deep', () => {
  it('ends normally with status 3 and closes the open frames', () => {
    const traces = path.join(dir, 'exit');
    const b = runTraced(exe, ['exit'], traces);
    expect(b.status).toBe(3);
    const trace = traceOf(traces, b.pid);
    const report = reportJson(trace) as { end: { how: string; code: number; complete: boolean } };
    expect(report.end).toMatchObject({ how: 'exit', code: 3, complete: true });
    const model = decodeTrace(readFileSync(trace));
    expect(model.problems.filter((p) => p.severity === 'error')).toEqual([]);
    // Every frame is closed; main and deep(5) … deep(0) by the UNWIND that exit() recorded.
    const closers = Array.from(model.frames.exit);
    expect(closers).not.toContain(NONE);
    expect(closers.filter((e) => model.events.kind[e] === Kind.UNWIND)).toHaveLength(1 + 6);
  });
});
