// The compare page of `cc-memwrap view A --compare B`: both traces from the local server, decoded in the worker, drawn
// one above the other by the viewer's own chart on shared axes (x: events in order from 0 to the longer run's end;
// one byte scale above the axis and one below for both), zoomed and panned together; under them the differences
// `report A --compare B` prints (analysis/compare.ts), as tables.
import { compareRuns, type Comparison, type CompareRow, type HeapCounts } from '../../../../analysis/compare.js';
import { budgetLine, exactBytes, fromTo, note, signed } from '../../../../analysis/compare-text.js';
import { chartSeries, eventClassMasks } from '../../../../analysis/lod.js';
import { formatCount } from '../../../../analysis/units.js';
import type { SessionInfo } from '../backend.js';
import { Chart } from '../chart/chart.js';
import { chartData, type ChartData } from '../chart/columns.js';
import { budgetMarks, decodeInWorker } from '../decode.js';
import { byId, el, fill } from '../dom.js';
import { api, progress, startPage } from '../served-page.js';
import type { ViewData } from '../view-data.js';
import '../styles.css';
import './compare.css';

/** For automation: whether both runs are drawn, or what went wrong. */
const handle = { ready: false, error: null as string | null };
(window as unknown as { ccMemwrapCompare: typeof handle }).ccMemwrapCompare = handle;

interface Run {
  info: SessionInfo;
  view: ViewData;
  data: ChartData;
}

/** One run from the server: its session, its trace decoded, its chart columns. */
async function load(run: 'a' | 'b'): Promise<Run> {
  const info = (await (await api(`./api/session?run=${run}`)).json()) as SessionInfo;
  const bytes = await (await api(`./api/trace?run=${run}`)).arrayBuffer();
  const view = await decodeInWorker(bytes, info.budgets, (phase, fraction) => progress(`${run.toUpperCase()}: ${phase}`, fraction));
  const m = view.model;
  return { info, view, data: chartData(chartSeries(m, null, view.statics, m.events.heapRequested), eventClassMasks(m), view.times) };
}

/** "A  grow.123.mwtrace: 3,005 events, peak heap 4,000 B, peak stack 400 B, static 0 B". */
function runTitle(side: string, r: Run): string {
  const s = r.view.summary;
  return `${side}  ${r.info.trace.name}: ${formatCount(s.events)} events, peak heap ${exactBytes(s.peakHeap.requested.bytes)}, peak stack ${exactBytes(s.peakStack.bytes)}, static ${exactBytes(s.static.bytes)}`;
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
  // Shared axes: the longer run's events, the larger values (budgets included) of both runs on each side.
  const marks = [budgetMarks(a.view), budgetMarks(b.view)];
  const widest = (side: 'above' | 'heap'): number =>
    Math.max(...[a, b].map((r) => (side === 'above' ? r.data.above : r.data.heap).extent(0, r.data.count).max), ...marks.flat().filter((m) => m.side === side).map((m) => m.bytes));
  const shared = { count: Math.max(a.data.count, b.data.count), up: widest('above'), down: widest('heap') };
  const charts = [a, b].map((r, i) => {
    const side = i === 0 ? 'a' : 'b';
    const chart = new Chart(byId(`chart-${side}`), byId(`overview-${side}`));
    chart.shared = shared;
    chart.budgets = marks[i]!;
    chart.setData(r.data, r.view.model.events.kind);
    return chart;
  });
  charts[0]!.onTransform = (t) => charts[1]!.follow(t);
  charts[1]!.onTransform = (t) => charts[0]!.follow(t);
  const run = (r: Run) => ({
    model: r.view.model,
    file: r.info.trace.name,
    inputs: { budgets: r.info.budgets === null ? null : { limits: r.info.budgets, source: r.info.budgetSource }, frameSizes: null },
  });
  differences(compareRuns(run(a), run(b)));
  handle.ready = true;
}

startPage(start, handle, 'The runs could not be compared');
