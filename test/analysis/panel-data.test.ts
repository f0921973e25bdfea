// The panels' data computed as a trace streams (index mode, analysis/panel-data.ts) is what the viewer's panels show
// for the same trace decoded whole (gui/renderer/src/tables.ts over the model, the budgets and extras of the decoding
// worker): every table, count, peak, leak, linked free, leak cause, budget and stack, and the flame graph's tree,
// for fixture traces and real programs read through small file windows, after a round trip through JSON.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkBudgets, type Budgets } from '../../analysis/budgets.js';
import { indexPanelsOf, indexPanelsText, PANEL_BY, PANEL_RANGES, PANEL_ROWS, panelExtras, panelTables, type IndexPanels, type PanelInputs } from '../../analysis/panel-data.js';
import { attribution } from '../../analysis/attribution.js';
import { limitSnapshot } from '../../analysis/peak.js';
import { summarize } from '../../analysis/summary.js';
import { callPaths, flameTree } from '../../analysis/call-paths.js';
import { consumed } from '../../analysis/consumed.js';
import { memorySource } from '../../analysis/trace/byte-source.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { FileSource } from '../../analysis/trace/file-source.js';
import { streamSource } from '../../analysis/trace/resolve-stream.js';
import { Tables } from '../../gui/renderer/src/tables.js';
import { packageRoot } from '../../package-root.js';
import { buildInstrumented, programsDir, runTraced, samplesDir, scratch, traceOf } from '../support/programs.js';

const NO_SIZES: PanelInputs['frameSizes'] = { program: null, units: null, missing: 'no program' };

/** The streamed panels' data (through JSON, as the page gets it) beside the whole-mode tables of the same trace. */
function expectSamePanels(trace: string, budgets: Budgets | null): void {
  const bytes = new Uint8Array(readFileSync(trace));
  const model = decodeTrace(bytes);
  const tables = new Tables(model, NO_SIZES);
  const file = FileSource.open(trace, 4096);
  let streamed;
  try {
    streamed = JSON.parse(JSON.stringify(panelTables(streamSource(file), { budgets, frameSizes: NO_SIZES }))) as ReturnType<typeof panelTables>;
  } finally {
    file.close();
  }
  const json = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;
  expect(streamed.summary).toEqual(json(summarize(model)));
  expect(streamed.blockCounts).toEqual(tables.blockCounts());
  for (const by of PANEL_BY) {
    const whole = tables.attribution(by);
    const s = streamed.attribution[by];
    expect(s.total).toBe(whole.rows.length);
    expect(s.rows).toEqual(json(whole.rows.slice(0, PANEL_ROWS)));
    expect(s.blocks).toEqual(whole.rows.slice(0, PANEL_ROWS).map((r) => [whole.blocks.get(r.key)!.allocations, whole.blocks.get(r.key)!.frees]));
    // The first event charged to each row is the first of the events whole mode highlights for it.
    const first = new Map<string, number>();
    attribution(model, { by }, (e, key) => first.has(key) || first.set(key, e));
    s.rows.forEach((r, i) => expect(s.firstEvent[i], `${by} ${r.label}`).toBe(first.get(r.key)));
  }
  const p = tables.peaks();
  expect(streamed.peaks).toEqual(json({ heap: limitSnapshot(p.heap, PANEL_ROWS), total: limitSnapshot(p.total, PANEL_ROWS) }));
  const leaks = tables.leaks();
  expect(streamed.leaks.classes.map((c) => [c.class, c.count, c.bytes, c.sites.length])).toEqual(leaks.classes.map((c) => [c.class, c.count, c.bytes, c.sites.length]));
  const listed = streamed.leaks.classes.flatMap((c) => c.sites.flatMap((s) => s.blocks));
  expect(listed).toEqual(json(leaks.classes.flatMap((c) => c.sites.flatMap((s) => s.blocks)).slice(0, PANEL_ROWS)));
  for (const b of listed) expect(streamed.leakAllocEvents[b.block]).toBe(model.blocks.allocEvent[b.block]);
  const linked = tables.linked();
  expect(streamed.linked.count).toBe(linked.count);
  expect(streamed.linked.frees).toEqual(json(linked.frees.slice(0, PANEL_ROWS)));
  expect(streamed.leakCauses).toEqual(json(tables.leakCauses()));
  expect(streamed.stack).toEqual(json(tables.stack()));
  const checks = budgets === null ? [] : checkBudgets(model, budgets);
  expect(streamed.budgets).toEqual(json(checks.map((c) => ({ ...c, ranges: c.ranges.slice(0, PANEL_RANGES) }))));
  // The flame graph and consumed chart: the same read from the file as from the bytes the page decodes, typed arrays
  // included after the host's JSON and the page's reading of it, as callPaths and consumed give them each in its
  // own passes.
  const fromFile = FileSource.open(trace, 4096);
  try {
    const text = indexPanelsText({ tables: streamed, extras: panelExtras(streamSource(fromFile)), seconds: 1 });
    // The two views' passes, driven together, give what each gives alone.
    const alone = streamSource(memorySource(bytes));
    expect(indexPanelsOf(JSON.parse(text) as IndexPanels).extras).toEqual({
      flame: flameTree(callPaths(alone, { peak: true }).root),
      consumed: consumed(alone),
    });
  } finally {
    fromFile.close();
  }
}

describe('the panels of a streamed trace are those of the decoded model', () => {
  it.each(['every-record', 'rare-records'])('fixture %s', (name) => {
    expectSamePanels(path.join(packageRoot, 'test', 'fixtures', 'traces', '1.4', `${name}.bin`), { heap: 64, stack: 256, total: 512 });
  });

  describe('real programs', () => {
    const traces = new Map<string, string>();
    beforeAll(() => {
      const dir = scratch('panel-data');
      const build = (name: string, source: string, flags: string[], args: string[] = []): void => {
        const exe = path.join(dir, name);
        buildInstrumented('gcc', ['-O0', ...flags], [source], exe);
        const out = path.join(dir, `${name}-traces`);
        traces.set(name, traceOf(out, runTraced(exe, args, out).pid));
      };
      build('leaks', path.join(programsDir, 'leaks.c'), []);
      build('stress', path.join(programsDir, 'stress.c'), ['-pthread'], ['threads']);
      build('linked-list', path.join(samplesDir, 'linked-list.c'), []);
      build('leak-causes', path.join(samplesDir, 'leak-causes.c'), []);
    }, 240_000);

    it.each(['leaks', 'stress', 'linked-list', 'leak-causes'])('%s', (name) => {
      expectSamePanels(traces.get(name)!, { heap: 1024, stack: 512 });
    }, 240_000);
  });
});
