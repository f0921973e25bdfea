// Instrumented shared objects (test/programs/plugin.c) loaded by hosts that are and are not instrumented
// (test/programs/plugin-host.c). A module linked through cc-memwrap with -shared depends on libmemwrap.so, so a plain
// host can load it; in one process there is one runtime and one trace, whoever loads whom.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Model } from '../../analysis/model.js';
import { siteInfo } from '../../analysis/sites.js';
import { Kind } from '../../analysis/trace/format.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { must, programsDir, runTraced, scratch, wrapper } from '../support/programs.js';

const plugin = path.join(programsDir, 'plugin.c');
const host = path.join(programsDir, 'plugin-host.c');

/** The module, built through cc-memwrap as a make rule for a shared library would build it. */
function buildModule(dir: string): string {
  const module = path.join(dir, 'libplugin.so');
  must(wrapper, ['--mw-strict', 'gcc', '-O1', '-g', '-fPIC', '-shared', plugin, '-o', module]);
  return module;
}

/** The one trace a run left in `traces`: more than one would mean two runtimes in one process. */
function onlyTrace(traces: string): Model {
  const files = readdirSync(traces).filter((f) => f.endsWith('.mwtrace'));
  expect(files).toHaveLength(1);
  const model = decodeTrace(readFileSync(path.join(traces, files[0]!)));
  expect(model.problems).toEqual([]);
  return model;
}

/** plugin.c's heap calls as "line kind" strings, in event order, and the functions entered there. */
function pluginActivity(model: Model): { heap: string[]; entered: string[] } {
  const heap: string[] = [];
  const entered = new Set<string>();
  const kinds: Record<number, string> = { [Kind.ALLOC]: 'alloc', [Kind.FREE]: 'free', [Kind.REALLOC]: 'realloc' };
  for (let e = 0; e < model.events.count; e++) {
    const info = siteInfo(model, model.events.site[e]!);
    if (!info?.file?.endsWith('plugin.c')) continue;
    const kind = model.events.kind[e]!;
    if (kind === Kind.ENTER) entered.add(info.func ?? '?');
    else if (kinds[kind]) heap.push(`${info.line} ${kinds[kind]}`);
  }
  return { heap, entered: [...entered].sort() };
}

const expectedActivity = { heap: ['11 alloc', '24 free', '19 alloc'], entered: ['plugin_drop', 'plugin_keep', 'plugin_make'] };

describe('an instrumented shared object', () => {
  it('is loaded by a plain host with dlopen, and records its calls, statics and heap into one trace', () => {
    const dir = scratch('shared-plain-host');
    const module = buildModule(dir);
    const exe = path.join(dir, 'host');
    must('gcc', ['-O1', host, '-o', exe, '-ldl']);
    // It needs nothing from the host: the runtime comes with it (libmemwrap.so, found through its RUNPATH).
    const needed = must('readelf', ['-d', module]).stdout;
    expect(needed).toMatch(/\(NEEDED\).*\[libmemwrap\.so\]/);
    expect(must('nm', ['-u', exe]).stdout).not.toMatch(/__mw_/);
    const traces = path.join(dir, 'traces');
    const ran = runTraced(exe, [module], traces);
    expect(ran.stderr).toBe('');
    expect(ran.stdout).toBe('xxxxxxxxx\n');
    expect(ran.status).toBe(0);
    const model = onlyTrace(traces);
    expect(pluginActivity(model)).toEqual(expectedActivity);
    // Only the module is instrumented: malloc stayed libc's, and the trace says so.
    expect(model.header.interposed).toBe(false);
    expect(model.statics.count).toBe(1);
  });

  it('is linked into a plain program at build time, and records as well', () => {
    const dir = scratch('shared-linked-host');
    const module = buildModule(dir);
    const exe = path.join(dir, 'host');
    must('gcc', ['-O1', '-DLINKED', host, '-o', exe, '-ldl', `-L${dir}`, '-lplugin', `-Wl,-rpath,${dir}`]);
    const traces = path.join(dir, 'traces');
    const ran = runTraced(exe, [], traces);
    expect([ran.status, ran.stdout]).toEqual([0, 'xxxxxxxxx\n']);
    expect(pluginActivity(onlyTrace(traces))).toEqual(expectedActivity);
  });

  it('loaded by an instrumented host, records into the host’s trace: one runtime per process', () => {
    const dir = scratch('shared-instrumented-host');
    const module = buildModule(dir);
    const exe = path.join(dir, 'host');
    must(wrapper, ['--mw-strict', 'gcc', '-O1', '-g', host, '-o', exe, '-ldl']);
    const traces = path.join(dir, 'traces');
    const ran = runTraced(exe, [module], traces);
    expect([ran.status, ran.stdout, ran.stderr]).toEqual([0, 'xxxxxxxxx\n', '']);
    const model = onlyTrace(traces);
    expect(pluginActivity(model)).toEqual(expectedActivity);
    // The host's runtime interposes malloc, so libc's own allocations (stdout's buffer) are there too.
    expect(model.header.interposed).toBe(true);
    let hostMain = false;
    for (let e = 0; e < model.events.count && !hostMain; e++) {
      const info = siteInfo(model, model.events.site[e]!);
      hostMain = model.events.kind[e] === Kind.ENTER && info?.func === 'main' && info.file?.endsWith('plugin-host.c') === true;
    }
    expect(hostMain).toBe(true);
  });
});
