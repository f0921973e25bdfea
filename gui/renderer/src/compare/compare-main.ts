// The compare page of `cc-memwrap view A --compare B`: both traces from the local server, decoded in the worker, drawn
// one above the other by the viewer's own chart on shared axes (x: events in order from 0 to the longer run's end;
// one byte scale above the axis and one below for both), zoomed and panned together; under them the differences
// `report A --compare B` prints (analysis/compare.ts), as tables.
//
// A run the host opened through its index (session mode 'index') is never fetched whole: its chart is drawn from the
// index's summaries as the viewer draws one (IndexChartData, the part in view fetched as the view narrows), its title
// from the index's facts; then the differences are the host's, streamed from both traces (`/api/compare`,
// host/compare-runs.ts), with each run's budget lines, and drawn by the same code.
import { compareRuns, type Comparison, type CompareRow, type HeapCounts } from '../../../../analysis/compare.js';
import { budgetLine, exactBytes, fromTo, note, signed } from '../../../../analysis/compare-text.js';
import { chartSeries, eventClassMasks } from '../../../../analysis/lod.js';
import { formatCount } from '../../../../analysis/units.js';
import type { SessionInfo } from '../backend.js';
import { Chart, withBudgets } from '../chart/chart.js';
import { chartData, type ChartData } from '../chart/columns.js';
import { budgetMarks, decodeInWorker } from '../decode.js';
import { byId, el, fill } from '../dom.js';
import { api, progress, startPage } from '../served-page.js';
import type { ViewData } from '../view-data.js';
import { POLL_MS, serverIndexApi, summariesBuilt } from '../backend.js';
import { IndexChartData } from '../index-view.js';
import { BUDGET_KINDS } from '../../../../analysis/budgets.js';
import type { CompareReply } from '../../../../host/session-types.js';
import type { BudgetMark } from '../chart/chart.js';
import '../styles.css';
import './compare.css';

/** For automation: whether both runs are drawn, or what went wrong. */
const handle = { ready: false, error: null as string | null };
(window as unknown as { ccMemwrapCompare: typeof handle }).ccMemwrapCompare = handle;

interface Run {
  info: SessionInfo;
  /** Whole mode: the trace decoded; null for a run drawn from its index. */
  view: ViewData | null;
  indexed: IndexChartData | null;
  data: ChartData;
  kinds: Uint8Array;
  facts: { events: number; peakHeap: number; peakStack: number; statics: number };
}

/** One run from the server: its session, its trace decoded (or its index's summaries), its chart columns. */
async function load(run: 'a' | 'b'): Promise<Run> {
  const info = (await (await api(`./api/session?run=${run}`)).json()) as SessionInfo;
  if (info.mode === 'index') return loadIndexed(run, info);
  const bytes = await (await api(`./api/trace?run=${run}`)).arrayBuffer();
  const view = await decodeInWorker(bytes, info.budgets, (phase, fraction) => progress(`${run.toUpperCase()}: ${phase}`, fraction));
  const m = view.model;
  const s = view.summary;
  return {
    info,
    view,
    indexed: null,
    data: chartData(chartSeries(m, null, view.statics, m.events.heapRequested), eventClassMasks(m), view.times),
    kinds: m.events.kind,
    facts: { events: s.events, peakHeap: s.peakHeap.requested.bytes, peakStack: s.peakStack.bytes, statics: s.static.bytes },
  };
}

/** A run the host opened through its index: waits while the host builds the chart's summaries, then draws from them. */
async function loadIndexed(run: 'a' | 'b', info: SessionInfo): Promise<Run> {
  const ixApi = serverIndexApi(run === 'b' ? 'run=b' : '');
  const status = await summariesBuilt(ixApi.status, (phase, fraction) => progress(`${run.toUpperCase()}: indexing ${info.trace.name}: ${phase}`, fraction));
  if (status.state === 'failed') throw new Error(`${info.trace.name}: ${status.message}`);
  const meta = status.meta;
  const indexed = new IndexChartData(meta, new Float64Array(await ixApi.summary()), ixApi);
  return { info, view: null, indexed, data: indexed.data, kinds: indexed.kinds, facts: { events: meta.events, peakHeap: meta.maxHeap, peakStack: meta.maxStack, statics: meta.staticBytes } };
}

/** "A  grow.123.mwtrace: 3,005 events, peak heap 4,000 B, peak stack 400 B, static 0 B". */
function runTitle(side: string, r: Run): string {
  const f = r.facts;
  return `${side}  ${r.info.trace.name}: ${formatCount(f.events)} events, peak heap ${exactBytes(f.peakHeap)}, peak stack ${exactBytes(f.peakStack)}, static ${exactBytes(f.statics)}`;
}

/** A run drawn from its index: its budget lines at their limits, the ranges above them once the host has checked them. */
function limitMarks(r: Run): BudgetMark[] {
  const limits = r.info.budgets ?? {};
  return BUDGET_KINDS.filter((k) => limits[k] !== undefined).map((k) => ({ label: k, side: k === 'heap' ? 'heap' : 'above', bytes: limits[k]!, ranges: [] }));
}

/** The differences streamed by the host from both traces, its progress in the bar until they come. */
async function hostComparison(): Promise<Extract<CompareReply, { state: 'ready' }>> {
  for (;;) {
    const reply = (await (await api('./api/compare')).json()) as CompareReply;
    if (reply.state === 'ready') return reply;
    if (reply.state === 'failed') throw new Error(reply.message);
    progress(`Differences: ${reply.phase}`, reply.fraction);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

function cells(tag: 'td' | 'th', values: string[], numeric: number): HTMLTableRowElement {
  return el('tr', {}, ...values.map((v, i) => el(tag, i >= 1 && i <= numeric ? { class: 'num' } : {}, v)));
}

/** A table of sites or functions, largest change first, as the command prints them. */
function rowsTable(title: string, rows: CompareRow[]): HTMLElement {
  const unchanged = rows.filter((r) => r.a !== null && r.b !== null && r.change.allocs === 0 && r.change.requestedBytes === 0 && r.change.liveRequestedBytes === 0).length;
  const head = ['', 'allocs', 'B − A', 'requested', 'B − A', 'live at end', 'B − A'];
  const value = (r: CompareRow, pick: (c: HeapCounts) => number, format: (n: number) => string): string[] => [fromTo(r.a, r.b, pick, format), signed(pick(r.change), format)];
  const body = rows.map((r) =>
    cells('td', [r.label + note(r), ...value(r, (c) => c.allocs, formatCount), ...value(r, (c) => c.requestedBytes, exactBytes), ...value(r, (c) => c.liveRequestedBytes, exactBytes)], 6),
  );
  return el(
    'div',
    { class: 'diff-block' },
    el('h3', {}, `${title} (${rows.length}${unchanged > 0 ? `, ${unchanged} unchanged` : ''})`),
    rows.length === 0 ? el('p', { class: 'empty' }, 'no allocations in either run') : el('table', { class: 'diff' }, el('thead', {}, cells('th', head, 6)), el('tbody', {}, ...body)),
  );
}

function differences(c: Comparison): void {
  const totals = c.totals.map((t) => {
    const format = t.unit === 'bytes' ? exactBytes : formatCount;
    return cells('td', [t.name, format(t.a), format(t.b), signed(t.change, format)], 3);
  });
  fill(
    byId('differences'),
    el('h2', {}, 'Differences (B − A)'),
    el('div', { class: 'diff-block' }, el('h3', {}, 'Totals'), el('table', { class: 'diff' }, el('thead', {}, cells('th', ['', 'A', 'B', 'B − A'], 3)), el('tbody', {}, ...totals))),
    rowsTable('Allocation sites, largest change first', c.sites),
    rowsTable('Functions (heap allocated in them), largest change first', c.functions),
    c.budgets === null ? null : el('div', { class: 'diff-block' }, el('h3', {}, 'Budgets'), el('ul', { class: 'budget-diff' }, ...c.budgets.checks.map((k) => el('li', {}, budgetLine(k))))),
  );
}

async function start(): Promise<void> {
  const a = await load('a');
  const b = await load('b');
  progress(null);
  fill(byId('compare-title'), `${a.info.trace.name} (A) compared with ${b.info.trace.name} (B)`);
  document.title = `${a.info.trace.name} / ${b.info.trace.name} · cc-memwrap`;
  fill(byId('run-a-title'), runTitle('A', a));
  fill(byId('run-b-title'), runTitle('B', b));
  // Shared axes: the longer run's events, the larger values of both runs on each side (and the budgets near them).
  const marks = [a, b].map((r) => (r.view !== null ? budgetMarks(r.view) : limitMarks(r)));
  const widest = (side: 'above' | 'heap'): number =>
    withBudgets(Math.max(...[a, b].map((r) => (side === 'above' ? r.data.above : r.data.heap).extent(0, r.data.count).max)), marks.flat(), side);
  const shared = { count: Math.max(a.data.count, b.data.count), up: widest('above'), down: widest('heap') };
  const runs = [a, b];
  const charts = runs.map((r, i) => {
    const side = i === 0 ? 'a' : 'b';
    const chart = new Chart(byId(`chart-${side}`), byId(`overview-${side}`));
    chart.shared = shared;
    chart.budgets = marks[i]!;
    chart.setData(r.data, r.kinds);
    if (r.indexed !== null) r.indexed.onWindow = () => chart.redraw();
    return chart;
  });
  // A run drawn from its index asks for the part in view once the view rests a moment (not on every frame of a drag).
  let pending = 0;
  const wantInView = (): void => {
    clearTimeout(pending);
    pending = window.setTimeout(() => {
      runs.forEach((r, i) => {
        if (r.indexed === null) return;
        const [from, to] = charts[i]!.visibleEvents();
        r.indexed.want(from, to);
      });
    }, 40);
  };
  charts[0]!.onTransform = (t) => {
    charts[1]!.follow(t);
    wantInView();
  };
  charts[1]!.onTransform = (t) => {
    charts[0]!.follow(t);
    wantInView();
  };
  wantInView();
  if (a.view !== null && b.view !== null) {
    const run = (r: Run) => ({
      model: r.view!.model,
      file: r.info.trace.name,
      inputs: { budgets: r.info.budgets === null ? null : { limits: r.info.budgets, source: r.info.budgetSource }, frameSizes: null },
    });
    differences(compareRuns(run(a), run(b)));
  } else {
    const host = await hostComparison();
    progress(null);
    // The ranges above each budget, now that the host has checked them, on the runs drawn from their index.
    runs.forEach((r, i) => {
      if (r.view !== null) return;
      charts[i]!.budgets = host.budgets[i]!.map((c) => ({ label: c.kind, side: c.kind === 'heap' ? 'heap' : 'above', bytes: c.limitBytes, ranges: c.ranges }));
      charts[i]!.redraw();
    });
    differences(host.comparison);
  }
  handle.ready = true;
}

startPage(start, handle, 'The runs could not be compared');
