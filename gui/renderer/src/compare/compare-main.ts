// The compare page of `cc-memwrap view A --compare B` (and of `report A --compare B --html`, both traces inside it):
// both runs drawn one above the other by the viewer's own chart on shared axes (x: events in order from 0 to the longer
// run's end; one byte scale above the axis and one below for both), zoomed and panned together; the legend, the zoom
// control and the keys of the timeline; a hover's tooltip, and a click's detail, call stack and source line, of the
// run clicked; under them the differences `report A --compare B` prints (analysis/compare.ts), as tables.
//
// A run the host opened through its index (session mode 'index') is never fetched whole: its chart is drawn from the
// index's summaries as the viewer draws one (IndexChartData, the part in view fetched as the view narrows), its title
// from the index's facts, its events explained by the host; then the differences are the host's, streamed from both
// traces (`/api/compare`, host/compare-runs.ts), with each run's budget lines, and drawn by the same code.
import { compareRuns, type Comparison, type CompareRow, type HeapCounts } from '../../../../analysis/compare.js';
import { budgetLine, exactBytes, fromTo, note, signed } from '../../../../analysis/compare-text.js';
import type { Model } from '../../../../analysis/model.js';
import { explainStack, traceNamesCallLines } from '../../../../analysis/frame-detail.js';
import { formatCount } from '../../../../analysis/units.js';
import { POLL_MS } from '../backend.js';
import { Chart, withBudgets } from '../chart/chart.js';
import { renderLegend } from '../chart/legend.js';
import { budgetMarks } from '../chart-budgets.js';
import { noSourceText, renderDetail, selectionMarks } from '../detail-pane.js';
import { byId, el, fill, keysAreTheControls } from '../dom.js';
import { setupZoom } from '../projector.js';
import { api, progress, startPage } from '../served-page.js';
import { SourcePane } from '../source/source-pane.js';
import { hideTooltip, showTooltip } from '../tooltip.js';
import { VOCABULARY_NOTES } from '../vocabulary.js';
import { BUDGET_KINDS } from '../../../../analysis/budgets.js';
import type { CompareReply } from '../../../../host/session-types.js';
import type { BudgetMark } from '../chart/chart.js';
import { isReport, reportRun, serverRun, type Run, type Side } from './compare-runs.js';
import '../styles.css';
import './compare.css';

/** For automation: whether both runs are drawn (or what went wrong), the selection, and where a run's bars are. */
const handle = {
  ready: false,
  error: null as string | null,
  selected: null as { side: Side; event: number } | null,
  eventClientX: (side: Side, e: number): number | null => charts.get(side)?.clientXOf(e) ?? null,
  plotClientY: (side: Side, where: 'above' | 'heap'): number => charts.get(side)?.clientYOfPlot(where) ?? 0,
  visibleEvents: (side: Side): [number, number] => charts.get(side)?.visibleEvents() ?? [0, 0],
};
(window as unknown as { ccMemwrapCompare: typeof handle }).ccMemwrapCompare = handle;

const charts = new Map<Side, Chart>();

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

/** The run clicked last, its detail and source: a click on either chart selects there, the other chart's mark cleared. */
class Selection {
  private latest = 0;
  private readonly panes = new Map<Side, SourcePane>();

  constructor(private readonly runs: ReadonlyMap<Side, Run>) {
    for (const [side, run] of runs) this.panes.set(side, new SourcePane(() => run, byId('source-head'), byId('source-body')));
  }

  async select(side: Side, e: number): Promise<void> {
    const run = this.runs.get(side)!;
    if (e < 0 || e >= run.facts.events) return;
    const ticket = ++this.latest;
    let ex;
    try {
      ex = await run.explain(e);
    } catch (err) {
      fill(byId('detail'), el('p', { class: 'missing' }, `Cannot show event ${e} of ${side.toUpperCase()}: ${(err as Error).message}`));
      return;
    }
    if (ticket !== this.latest) return; // a later click won
    const pane = this.panes.get(side)!;
    const { related, orphaned, source } = selectionMarks(ex.detail);
    for (const [s, chart] of charts) {
      chart.marks = s === side ? { ...chart.marks, selected: e, related, orphaned } : { ...chart.marks, selected: null, related: new Int32Array(0), orphaned: new Int32Array(0) };
      if (s === side) chart.reveal(e);
      chart.redraw();
    }
    const m = ex.run as Model;
    const detail = byId('detail');
    renderDetail(detail, ex.detail, explainStack(m, ex.stack, run.info.stack.units ?? null), traceNamesCallLines(m), {
      goto: (x) => void this.select(side, x),
      source: (file, lines) => void pane.show(file, lines.map((line) => ({ line, kind: 'selected' }))),
    });
    detail.prepend(el('p', { class: 'run-of', 'data-role': 'detail-run' }, `${side.toUpperCase()}  ${run.info.trace.name}`));
    handle.selected = { side, event: e };
    await pane.show(ex.detail.place?.file ?? null, source, noSourceText(ex.detail, ex.end));
  }
}

/** A hover on `run`'s chart: its event's tooltip beside the pointer, in the run's box (the host asked for an indexed run). */
function hoverOn(run: Run, chart: Chart): void {
  const tip = byId(`tooltip-${run.side}`);
  const area = byId(`run-${run.side}`);
  let latest = 0;
  chart.onHover = (e, clientX, clientY, columnEvents) => {
    const ticket = ++latest;
    if (e === null) return hideTooltip(tip);
    run.explain(e).then(
      (ex) => ticket === latest && showTooltip(tip, area, ex.detail, { clientX, clientY, columnEvents }),
      () => hideTooltip(tip),
    );
  };
}

/** The timeline's keys, for both charts at once: + and − zoom, ← and → pan, 0 shows the whole run again. */
function keys(lead: Chart): void {
  document.addEventListener('keydown', (e) => {
    if (e.ctrlKey || e.metaKey || e.altKey || keysAreTheControls(e.target)) return;
    const act: Record<string, () => void> = {
      '0': () => lead.resetZoom(),
      '+': () => lead.zoomBy(1.5),
      '=': () => lead.zoomBy(1.5),
      '-': () => lead.zoomBy(1 / 1.5),
      ArrowLeft: () => lead.panBy(120),
      ArrowRight: () => lead.panBy(-120),
    };
    const f = act[e.key];
    if (f === undefined) return;
    e.preventDefault();
    f();
  });
}

async function start(): Promise<void> {
  const report = isReport();
  const a = report ? await reportRun('a') : await serverRun('a');
  const b = report ? await reportRun('b') : await serverRun('b');
  progress(null);
  fill(byId('compare-title'), `${a.info.trace.name} (A) compared with ${b.info.trace.name} (B)`);
  document.title = `${a.info.trace.name} / ${b.info.trace.name} · cc-memwrap`;
  fill(byId('run-a-title'), runTitle('A', a));
  fill(byId('run-b-title'), runTitle('B', b));
  renderLegend(byId('legend'), VOCABULARY_NOTES);
  // Shared axes: the longer run's events, the larger values of both runs on each side (and the budgets near them).
  const marks = [a, b].map((r) => (r.view !== null ? budgetMarks(r.view.budgets) : limitMarks(r)));
  const widest = (side: 'above' | 'heap'): number =>
    withBudgets(Math.max(...[a, b].map((r) => (side === 'above' ? r.data.above : r.data.heap).extent(0, r.data.count).max)), marks.flat(), side);
  const shared = { count: Math.max(a.data.count, b.data.count), up: widest('above'), down: widest('heap') };
  const runs = [a, b];
  const selection = new Selection(new Map(runs.map((r) => [r.side, r])));
  runs.forEach((r, i) => {
    const chart = new Chart(byId(`chart-${r.side}`), byId(`overview-${r.side}`));
    chart.shared = shared;
    chart.budgets = marks[i]!;
    chart.setData(r.data, r.kinds);
    if (r.indexed !== null) r.indexed.onWindow = () => chart.redraw();
    chart.onPick = (e) => void selection.select(r.side, e);
    hoverOn(r, chart);
    charts.set(r.side, chart);
  });
  const [ca, cb] = [charts.get('a')!, charts.get('b')!];
  setupZoom([ca, cb]);
  keys(ca);
  // A run drawn from its index asks for the part in view once the view rests a moment (not on every frame of a drag).
  let pending = 0;
  const wantInView = (): void => {
    clearTimeout(pending);
    pending = window.setTimeout(() => {
      for (const r of runs) {
        if (r.indexed === null) continue;
        const [from, to] = charts.get(r.side)!.visibleEvents();
        r.indexed.want(from, to);
      }
    }, 40);
  };
  ca.onTransform = (t) => {
    cb.follow(t);
    wantInView();
  };
  cb.onTransform = (t) => {
    ca.follow(t);
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
      const chart = charts.get(r.side)!;
      chart.budgets = host.budgets[i]!.map((c) => ({ label: c.kind, side: c.kind === 'heap' ? 'heap' : 'above', bytes: c.limitBytes, ranges: c.ranges }));
      chart.redraw();
    });
    differences(host.comparison);
  }
  handle.ready = true;
}

startPage(start, handle, 'The runs could not be compared');
