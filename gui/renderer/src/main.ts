// The viewer page: loads a trace (from the host, a file dialog, drag and drop or the recent list) and reads it through
// one interface (backend.ts IndexApi): a large trace through the host's index, any other through the page's own index
// in a worker (local-index.ts), with a progress bar; and wires chart, detail, source, panels, search, keyboard and
// export together.
import type { AttributionBy, AttributionRow } from '../../../analysis/attribution.js';
import type { EventClass, EventDetail, StackEntry } from '../../../analysis/event-detail.js';
import { explainStack, traceNamesCallLines } from '../../../analysis/frame-detail.js';
import { findSitesIn, type SiteMatch } from '../../../analysis/event-sets.js';
import type { Model, ThreadInfo } from '../../../analysis/model.js';
import { decodeRange, siteTableOf } from '../../../analysis/event-index.js';
import { DETAIL_SPAN, IndexChartData } from './index-view.js';
import { eventsNotice } from './index-events.js';
import type { BuildState, IndexPanelsReply } from '../../../host/session-types.js';
import { formatBytesFine, plural } from '../../../analysis/units.js';
import { describeEnd } from '../../../analysis/summary.js';
import { openTrace, pickBackend, summariesBuilt, type Backend, type EventsQuery, type IndexApi, type OpenedTrace, type SessionInfo } from './backend.js';
import { Chart, type DrawnValues } from './chart/chart.js';
import type { ChartData } from './chart/columns.js';
import { chartPng, chartSvg, download, type ExportTitle } from './chart/export.js';
import { renderLegend } from './chart/legend.js';
import { VOCABULARY_NOTES } from './vocabulary.js';
import { noSourceText, renderDetail, selectionMarks } from './detail-pane.js';
import { byId, el, fill, keysAreTheControls } from './dom.js';
import { Panels } from './panels/panels.js';
import { setupProjector } from './projector.js';
import { SourcePane } from './source/source-pane.js';
import { budgetMarks } from './chart-budgets.js';
import { IndexTables } from './index-tables.js';
import { hideTooltip, showTooltip } from './tooltip.js';
import './styles.css';

/** Timings and controls for automation (tests, the benchmark): read-only views of the page's own state. */
interface ViewHandle {
  ready: boolean;
  /** 'index' while a trace the host opened through its index is shown, 'whole' for one the page indexed itself. */
  mode: 'whole' | 'index';
  error: string | null;
  timings: { start: number; bytes: number; decoded: number; firstChart: number; detailShown: number };
  /** Milliseconds each window of events took to arrive. */
  fetchTimes: number[];
  /** Whether events [a, b) have arrived (drawn one by one, not from summaries). */
  hasEvents(a: number, b: number): boolean;
  /** Whether the fine summaries of events [a, b) have arrived (drawn instead of the buckets'). */
  hasFine(a: number, b: number): boolean;
  drawTimes: number[];
  events: number;
  selected: number | null;
  eventClientX(e: number): number | null;
  plotClientY(side: 'above' | 'heap'): number;
  zoomToEvents(a: number, b: number): void;
  zoomBy(f: number): void;
  panBy(px: number): void;
  visibleEvents(): [number, number];
  /** What the chart's last frame drew (`view`) or the overview strip (`overview`), as numbers. */
  drawn(which: 'view' | 'overview'): DrawnValues | null;
  /** The budgets and labels the chart's last frame drew on its canvas. */
  marks(): ReturnType<Chart['drawnMarks']>;
}

/** What the page has loaded and what the user selected: everything that changes when a trace opens. */
interface PageState {
  /** The host's session when the trace came from the host (sources, budgets, stack data); null for a file handed to the page. */
  hostSession: SessionInfo | null;
  /** The trace's index: the host's, or the page's own (local-index.ts), and `close` to let go of the latter. */
  api: (IndexApi & { close?(): void }) | null;
  /** What the chart draws (one thread's when the thread filter is set). */
  data: ChartData | null;
  /** The selected event, or null. */
  selected: number | null;
  /** The trace's name: the title of exports. */
  traceTitle: string;
  /** The chart's summaries and fetched events, and the run's sites (for names, search, call lines). */
  index: IndexChartData | null;
  indexRun: Pick<Model, 'sites' | 'program'> | null;
  /** The panels' tables, once they have come. */
  indexTables: IndexTables | null;
}

const backend: Backend = pickBackend();
const state: PageState = { hostSession: null, api: null, data: null, selected: null, traceTitle: 'trace', index: null, indexRun: null, indexTables: null };

const chart = new Chart(byId('chart'), byId('overview'));
const source = new SourcePane(() => (state.hostSession ? backend : null), byId('source-head'), byId('source-body'));
const handle: ViewHandle = {
  ready: false,
  mode: 'whole',
  error: null,
  timings: { start: performance.now(), bytes: 0, decoded: 0, firstChart: 0, detailShown: 0 },
  get fetchTimes() {
    return state.index?.fetchTimes ?? [];
  },
  hasEvents: (a, b) => state.index?.covers(a, b) ?? false,
  hasFine: (a, b) => state.index?.coversFine(a, b) ?? false,
  drawTimes: chart.drawTimes,
  events: 0,
  get selected() {
    return state.selected;
  },
  eventClientX: (e) => chart.clientXOf(e),
  plotClientY: (side) => chart.clientYOfPlot(side),
  zoomToEvents: (a, b) => chart.zoomToEvents(a, b),
  zoomBy: (f) => chart.zoomBy(f),
  panBy: (px) => chart.panBy(px),
  visibleEvents: () => chart.visibleEvents(),
  drawn: (which) => chart.drawn(which),
  marks: () => chart.drawnMarks(),
};
(window as unknown as { ccMemwrapView: ViewHandle }).ccMemwrapView = handle;

const panels = new Panels(byId('panel-tabs'), byId('panel-body'), {
  attributionRow: (by, row) => highlightRow(by, row),
  highlight: (events, label, file, line) => highlight(events, label, file, line),
  goto: (e) => select(e),
  source: (file, line, marks) => void source.show(file, marks ?? (line === null ? [] : [{ line, kind: 'selected' }])),
  blocks: (blocks, file, line) => {
    void eventsOf({ blocks }).then((events) => events !== null && setHighlight(events));
    void source.show(file, line === null ? [] : [{ line, kind: 'selected' }]);
  },
  note: (text) => fill(byId('status-line'), text),
});

function showError(message: string | null): void {
  const box = byId('error');
  box.hidden = message === null;
  fill(box, message ?? '');
  handle.error = message;
}

/** The toolbar's title: the trace shown (or the one loading), never a stale one. `shownTitle` is the shown trace's. */
let shownTitle: string | null = null;
function title(text: string): void {
  fill(byId('trace-name'), text);
  document.title = `${text} · cc-memwrap`;
}

/** While a trace loads the title says so; if it fails, the title goes back to what is still shown. */
function loadingTitle(name: string | null): void {
  if (name !== null) title(`Loading ${name}…`);
  else if (shownTitle !== null) title(shownTitle);
  else title('no trace open (Open…, or drop a .mwtrace file here)');
}

function progress(label: string | null, fraction = 0): void {
  const box = byId('progress');
  box.hidden = label === null;
  if (label !== null) {
    fill(byId('progress-label'), label);
    byId<HTMLProgressElement>('progress-bar').value = fraction;
  }
}


/** The exports' title band: the trace and its program, and the events shown. */
function exportTitle(): ExportTitle {
  const program = state.indexRun?.program?.path ?? null;
  const [a, b] = chart.visibleEvents();
  const thread = byId<HTMLSelectElement>('thread');
  const whose = thread.value === 'all' ? '' : `, ${thread.selectedOptions[0]?.textContent ?? ''}`;
  return {
    title: program === null ? state.traceTitle : `${program.split('/').pop()} — ${state.traceTitle}`,
    subtitle: `events ${a.toLocaleString('en-US')}–${Math.max(a, b - 1).toLocaleString('en-US')} of ${handle.events.toLocaleString('en-US')}${whose}`,
  };
}

/** The thread filter's choices: all threads, or each thread row of the trace. */
function threadOptions(threads: readonly Pick<ThreadInfo, 'index' | 'osTid'>[]): void {
  const sel = byId<HTMLSelectElement>('thread');
  fill(sel, el('option', { value: 'all' }, 'all threads'), ...threads.map((t, row) => el('option', { value: String(row) }, `thread ${t.index}${t.osTid !== null ? ` (tid ${t.osTid})` : ''}`)));
}

/** The thread row the filter shows, or null for all threads. */
function threadRow(): number | null {
  const value = byId<HTMLSelectElement>('thread').value;
  return value === 'all' ? null : Number(value);
}

/** The chart drawn anew from the index under the toolbar's thread filter and libc toggle. */
function applyFilter(): void {
  const ix = state.index;
  if (ix === null) return;
  ix.setFilter({ thread: threadRow(), instrumented: !byId<HTMLInputElement>('show-libc').checked });
  state.data = ix.data;
  chart.setData(ix.data, ix.kinds);
}

/**
 * The "libc heap" toggle: redraws the heap with or without the blocks allocated inside libc or uninstrumented code,
 * and when they are hidden says how many there were and how much of them was live at most (the index counts them as
 * it is built), so the totals stay whole.
 */
function applyLibcHeap(): void {
  const ix = state.index;
  if (ix === null) return;
  applyFilter();
  fill(byId('status-line'), byId<HTMLInputElement>('show-libc').checked ? '' : libcHidden(ix.meta.libcBlocks, ix.meta.maxLibcHeap));
}

/** The status line while the libc heap is hidden. */
function libcHidden(blocks: number, bytes: number): string {
  return `Hidden: ${plural(blocks, 'block')} allocated inside libc or uninstrumented code, at most ${formatBytesFine(bytes)} live at once (counted in the Summary's totals).`;
}

/**
 * The x axis the toolbar asks for. Wall time needs the events to have more than one timestamp: the runtime reads the
 * clock once every 256 records of a thread, so a short run can have one time for all its events, and a time axis
 * would stack them into one bar. Then the axis stays in event order, and the status line says why.
 */
function applyXMode(): void {
  const select = byId<HTMLSelectElement>('x-mode');
  const ix = state.index;
  if (select.value === 'time' && ix !== null && !ix.hasTimes) {
    select.value = 'events';
    fill(byId('status-line'), `Wall time not used yet: ${NO_TIMES_YET}; the x axis stays in event order.`);
  }
  const n = ix?.meta.events ?? 0;
  if (select.value === 'time' && ix !== null && n > 0 && !(ix.data.times[0]! < ix.data.times[n - 1]!)) {
    select.value = 'events';
    fill(
      byId('status-line'),
      `Wall time not used: ${n === 1 ? 'the one event has' : `all ${n.toLocaleString('en-US')} events share`} one timestamp (the runtime reads the clock once every 256 records of a thread, and this run is shorter); the x axis stays in event order.`,
    );
  }
  const mode = select.value === 'time' ? 'time' : 'events';
  if (mode !== chart.xMode) chart.setMode(mode);
}

function recentList(info: SessionInfo): void {
  const sel = byId<HTMLSelectElement>('recent');
  fill(sel, el('option', { value: '' }, 'Recent…'), ...info.recent.map((r) => el('option', { value: r.path, title: r.path }, r.name)));
  // An empty list (a fresh machine, or the HTML report, which has none) is not offered.
  sel.hidden = info.recent.length === 0;
}

/** The trace the host opened: through its index, or its bytes read and indexed in the page. */
async function loadFromHost(info: SessionInfo): Promise<void> {
  handle.ready = false;
  state.hostSession = info;
  panels.ramMap = info.ramMap ? { map: info.ramMap, budgets: info.budgets } : null;
  recentList(info);
  loadingTitle(info.trace.name);
  showError(null);
  progress(`Reading ${info.trace.name}`, 0);
  handle.timings.bytes = performance.now();
  try {
    const opened = await openTrace(backend, info, (phase, fraction) => progress(phase, fraction));
    await show(info.trace.name, opened);
  } catch (e) {
    failed(info.trace.name, e);
  }
}

/** A trace the user handed the page directly (file input, drop): indexed in the page; sources come only from a chosen folder. */
async function loadFile(file: File): Promise<void> {
  handle.ready = false;
  state.hostSession = null;
  panels.ramMap = null;
  loadingTitle(file.name);
  showError(null);
  progress(`Reading ${file.name}`, 0);
  handle.timings.bytes = performance.now();
  try {
    const opened = await openTrace(backend, await file.arrayBuffer(), (phase, fraction) => progress(phase, fraction));
    await show(file.name, opened);
  } catch (e) {
    failed(file.name, e);
  }
}

function failed(name: string, e: unknown): void {
  progress(null);
  loadingTitle(null);
  showError(`Cannot show ${name}: ${(e as Error).message}`);
}

/** Leaves the trace shown: its page-side index let go of, its view's handlers off. */
function leave(): void {
  state.api?.close?.();
  state.api = null;
  byId('events-state').hidden = true;
  const time = byId<HTMLSelectElement>('x-mode').querySelector<HTMLOptionElement>('option[value=time]')!;
  time.disabled = false;
  time.title = '';
  state.index = null;
  state.indexRun = null;
  state.indexTables = null;
  chart.onTransform = () => {};
}

/**
 * A trace through its index (the host's, or the page's own): waits for its summaries (their build's progress in the
 * bar), then draws the chart from them; the fine summaries and the events in view are fetched as the view narrows
 * (IndexChartData), details on a click. The page is ready once the chart is drawn and, when the whole trace is few
 * enough events to be fetched and its index answers them without holding them back, once they are drawn one by one.
 */
async function show(name: string, opened: OpenedTrace): Promise<void> {
  const api = opened.api;
  const status = await summariesBuilt(api.status, (phase, fraction) => progress(`Indexing ${name}: ${phase}`, fraction));
  if (status.state === 'failed') throw new Error(status.message);
  const meta = status.meta;
  const summary = new Float64Array(await api.summary());
  handle.timings.decoded = performance.now();
  progress(null);
  leave();
  const data = new IndexChartData(meta, summary, api.eventsWatch?.latestWindow() ?? api);
  state.api = api;
  state.index = data;
  state.indexRun = { sites: siteTableOf(meta), program: meta.program };
  state.traceTitle = name;
  state.selected = null;
  handle.mode = opened.mode;
  handle.events = meta.events;
  shownTitle = `${name} — ${plural(meta.events, 'event')}${opened.titleNote}`;
  title(shownTitle);
  // The thread filter lists the index's threads; it and the libc toggle draw from the index's thread table and instrumented heap.
  threadOptions(meta.threads);
  byId<HTMLSelectElement>('x-mode').value = 'events';
  data.setFilter({ thread: null, instrumented: !byId<HTMLInputElement>('show-libc').checked });
  state.data = data.data;
  chart.budgets = [];
  chart.marks = { selected: null, related: new Int32Array(0), orphaned: new Int32Array(0), highlight: new Int32Array(0) };
  // The events in view, drawn one by one: the first window (the whole run, when it is few enough events) is asked for at once.
  const firstWindow = new Promise<void>((arrived) => {
    data.onWindow = () => {
      chart.redraw();
      if (data.covers(0, Math.min(meta.events, DETAIL_SPAN))) arrived();
    };
  });
  let pending = 0;
  chart.onTransform = () => {
    // A tooltip asked for before the view moved would name an event no longer under the pointer.
    hovering++;
    hovered = null;
    hideTooltip(byId('tooltip'));
    // The events in view are asked for once the view rests a moment (not on every frame of a drag).
    clearTimeout(pending);
    pending = window.setTimeout(() => {
      const [a, b] = chart.visibleEvents();
      data.want(a, b);
    }, 40);
  };
  if (chart.xMode !== 'events') chart.setMode('events');
  chart.setData(data.data, data.kinds);
  data.want(0, meta.events);
  handle.timings.firstChart = performance.now();
  source.reset();
  fill(byId('status-line'), opened.statusNote(meta));
  const panelsShown = showPanels(api, data, name);
  followEvents(api, data, status.events);
  fill(byId('detail'), el('p', { class: 'hint' }, 'Click a bar to see its source line, its call stack and, for a heap event, the other end of its block. Type an event number in the search box to jump to it.'));
  if (state.hostSession?.budgetProblem) showError(`Budgets not drawn: ${state.hostSession.budgetProblem}`);
  // A trace held whole has its events and panels at once: the page is ready when they are drawn. Another is ready with
  // its summaries' chart, the rest coming as the host has it.
  if (api.whole === true) {
    if (meta.events <= DETAIL_SPAN) await firstWindow;
    await panelsShown;
  }
  if (state.index === data) handle.ready = true;
}

/** Why the wall-time axis waits while the events are built. */
const NO_TIMES_YET = "the chart's summaries are built first, without times (reading the trace's times would slow the first chart); the wall-time axis comes with the events";

/**
 * The wall-time choice of the x axis, off with its reason while the summaries carry no times; when the events are
 * ready, the buckets' times taken from the whole index's summaries and the choice on.
 */
function timeChoice(api: IndexApi, ix: IndexChartData, events: BuildState): void {
  const option = byId<HTMLSelectElement>('x-mode').querySelector<HTMLOptionElement>('option[value=time]')!;
  const on = (yes: boolean): void => {
    option.disabled = !yes;
    option.title = yes ? '' : `not yet: ${NO_TIMES_YET}`;
  };
  if (ix.hasTimes) return on(true);
  on(false);
  if (events.state !== 'ready') return;
  void api.summary().then(
    (bytes) => {
      if (state.index !== ix) return;
      ix.takeTimes(new Float64Array(bytes));
      on(ix.hasTimes);
    },
    (e: unknown) => {
      if (state.index === ix) option.title = `not available: the index's summaries could not be read again (${(e as Error).message})`;
    },
  );
}

/** The notice of the events while the host builds them (index-events.ts), until they are ready; the wall-time choice with them. */
function followEvents(api: IndexApi, ix: IndexChartData, events: BuildState | undefined): void {
  const box = byId('events-state');
  const show = (s: BuildState): void => {
    const text = eventsNotice(s);
    box.hidden = text === null;
    fill(box, text ?? '');
    if (state.index === ix) timeChoice(api, ix, s);
  };
  if (api.eventsWatch === undefined || events === undefined) return show({ state: 'ready', seconds: 0 });
  api.eventsWatch.onChange = show;
  api.eventsWatch.follow(events);
}

/**
 * The panels, from the data the index computes as it reads the trace (IndexTables), its progress shown until it
 * comes (a report file carries them); the budgets it checked drawn on the chart. Where there are none, the host's
 * report instead.
 */
async function showPanels(api: IndexApi, ix: IndexChartData, name: string): Promise<void> {
  fill(byId('panel-tabs'), el('button', { type: 'button', class: 'active' }, 'Panels'));
  const waiting = el('p', { class: 'empty' });
  fill(byId('panel-body'), waiting);
  // Meanwhile the host's text report (one pass), once it is ready: shown below the panels' progress.
  let reportShown = false;
  for (;;) {
    if (state.index !== ix) return;
    let r: IndexPanelsReply;
    try {
      r = await api.panels();
    } catch (e) {
      r = { state: 'failed', message: (e as Error).message };
    }
    if (state.index !== ix) return;
    if (r.state === 'ready') {
      state.indexTables = new IndexTables(state.indexRun!, r.panels, (q) => api.eventsOf(q), r.timing);
      panels.set(state.indexTables.view(), state.indexTables);
      chart.budgets = budgetMarks(r.panels.tables.budgets);
      chart.redraw();
      return;
    }
    if (r.state === 'failed') return reportPanel(api, ix, name, r.message);
    const how = r.state === 'waiting' ? (r.for === undefined ? 'starting' : `waiting for ${r.for}`) : `${Math.floor(r.fraction * 100)} %, ${r.phase}`;
    const events = api.eventsWatch?.current;
    const report = reportShown ? '' : events?.state === 'building' ? ` The text report comes after the events are indexed (${Math.floor(events.fraction * 100)}%).` : '';
    fill(waiting, `Computing the tables, flame graph and budgets as the trace is read (${how})…${report}`);
    if (!reportShown) {
      const report = await api.report().catch(() => null);
      if (state.index !== ix) return;
      if (report?.state === 'ready') {
        reportShown = true;
        byId('panel-body').append(el('p', { class: 'hint' }, `Meanwhile, \`cc-memwrap report --by function --peak --leaks ${name}\`, computed on the host as it streamed the trace:`), el('pre', { class: 'report-text' }, report.text));
      }
    }
    await new Promise((done) => setTimeout(done, api.whole === true ? 50 : 500));
  }
}

/** A table row's first event, jumped to (where the index lists no row's events). */
function jumpToRow(tables: IndexTables, by: 'function' | 'site' | 'thread' | 'library', row: AttributionRow): void {
  const e = tables.firstEventOf(by, row);
  if (e === null) return fill(byId('status-line'), `${row.label}: no heap event to jump to.`);
  setHighlight(new Int32Array(0));
  jumpTo(e);
  fill(byId('status-line'), `${row.label}: its first heap event, ${e.toLocaleString('en-US')}. Highlighting all of a row's events needs the whole trace decoded, which the viewer does not do for a trace opened through its index.`);
}

/**
 * The panel where the index has no panels' data (`why`): the report the host computes by streaming the trace once
 * (summary, heap by function, peaks, leaks), when it is ready.
 */
async function reportPanel(api: IndexApi, ix: IndexChartData, name: string, why: string): Promise<void> {
  fill(byId('panel-tabs'), el('button', { type: 'button', class: 'active' }, 'Report'));
  const note = `No interactive tables, flame graph or budgets: ${why}. This is \`cc-memwrap report --by function --peak --leaks ${name}\`, computed on the host as it streams the trace.`;
  for (;;) {
    if (state.index !== ix) return;
    let r: Awaited<ReturnType<typeof api.report>>;
    try {
      r = await api.report();
    } catch (e) {
      r = { state: 'failed', message: (e as Error).message };
    }
    if (state.index !== ix) return;
    if (r.state === 'ready') return fill(byId('panel-body'), el('p', { class: 'hint' }, note), el('pre', { class: 'report-text' }, r.text));
    if (r.state === 'failed') return fill(byId('panel-body'), el('p', { class: 'empty' }, `The host could not compute the report: ${r.message}`));
    const events = api.eventsWatch?.current;
    fill(
      byId('panel-body'),
      el('p', { class: 'empty' }, events?.state === 'building' ? `The host computes the report once the events are indexed (events: building ${Math.floor(events.fraction * 100)}%), in one more pass over the trace…` : 'The host is computing the report (one more pass over the trace)…'),
    );
    await new Promise((done) => setTimeout(done, 1000));
  }
}

// ---- selection ----

function setHighlight(events: Int32Array): void {
  chart.marks = { ...chart.marks, highlight: events };
  chart.redraw();
}

/** The events of a row, blocks or call path as the index lists them, or null (said in the status line) where it does not. */
async function eventsOf(query: EventsQuery): Promise<Int32Array | null> {
  const api = state.api;
  if (api === null) return null;
  const r = await api.eventsOf(query);
  return typeof r === 'string' || state.api !== api ? null : r;
}

/** A table row: its events highlighted; where the index lists none, its first event jumped to. */
function highlightRow(by: AttributionBy, row: AttributionRow): void {
  const api = state.api;
  if (api === null) return;
  void api.eventsOf({ by, key: row.key }).then((r) => {
    if (state.api !== api) return;
    if (typeof r !== 'string') return highlight(r, row.label, row.file, row.line);
    if (state.indexTables !== null && by !== 'file' && by !== 'entry' && by !== 'library-function') jumpToRow(state.indexTables, by, row);
  });
}

/** Highlights events on the chart, says how many in the status line, opens the source line they are named by. */
function highlight(events: Int32Array, label: string, file: string | null, line: number | null): void {
  setHighlight(events);
  fill(byId('status-line'), `${label}: ${events.length.toLocaleString('en-US')} ${events.length === 1 ? 'event' : 'events'} highlighted`);
  if (file !== null) void source.show(file, line === null ? [] : [{ line, kind: 'selected' }]);
}

/** The latest selection asked of the index: an older answer arriving late is dropped. */
let selecting = 0;

/** Selects an event: its detail and call stack from the index, shown with the chart's marks and the source. */
async function select(e: number): Promise<void> {
  const api = state.api;
  const ix = state.index;
  if (api === null || ix === null || e < 0 || e >= ix.meta.events) return;
  const ticket = ++selecting;
  state.selected = e;
  const notice = api.eventsWatch?.current.state === 'building' && eventsNotice(api.eventsWatch.current);
  if (notice) fill(byId('detail'), el('p', { class: 'hint' }, `Event ${e.toLocaleString('en-US')}: ${notice}. Its detail shows here then.`));
  try {
    const r = await api.detail(e);
    if (ticket !== selecting || state.index !== ix) return;
    showSelection(r.detail, r.stack, state.indexRun!, describeEnd(ix.meta.end.how, ix.meta.end.code, ix.meta.end.complete));
    handle.timings.detailShown = performance.now();
  } catch (err) {
    showError(`Cannot show event ${e}: ${(err as Error).message}`);
  }
}

/** An event's detail on the page: chart marks, the detail pane with its call stack, the source with related lines. */
function showSelection(d: EventDetail, stack: StackEntry[], run: Pick<Model, 'sites' | 'program'>, endDescription: string): void {
  const e = d.event;
  // explainStack and traceNamesCallLines read the site table and the working directory only.
  const m = run as Model;
  const { related, orphaned, source: marks } = selectionMarks(d);
  chart.marks = { ...chart.marks, selected: e, related, orphaned };
  chart.reveal(e);
  chart.redraw();
  renderDetail(byId('detail'), d, explainStack(m, stack, state.hostSession?.stack.units ?? null), traceNamesCallLines(m), {
    goto: (x) => select(x),
    source: (file, lines) => void source.show(file, lines.map((line) => ({ line, kind: 'selected' }))),
  });
  if (d.class !== 'other') byId<HTMLSelectElement>('walk-kind').value = d.class;
  void source.show(d.place?.file ?? null, marks, noSourceText(d, endDescription));
}

// ---- chart pointer ----

chart.onPick = (e) => void select(e);
/** The latest hover asked of the index (older answers are dropped), and the last detail it gave. */
let hovering = 0;
let hovered: EventDetail | null = null;
chart.onHover = (e, clientX, clientY, columnEvents) => {
  const api = state.api;
  if (e === null || state.index === null || api === null) {
    hovering++;
    return hideTooltip(byId('tooltip'));
  }
  if (hovered?.event === e) return showTooltip(byId('tooltip'), byId('chart-area'), hovered, { clientX, clientY, columnEvents });
  // No tooltip while the host builds the events (a hover does not wait for them as a click does).
  if (api.eventsWatch?.current.state === 'building') return hideTooltip(byId('tooltip'));
  const ticket = ++hovering;
  api.detail(e).then(
    (r) => {
      if (ticket !== hovering) return;
      hovered = r.detail;
      showTooltip(byId('tooltip'), byId('chart-area'), r.detail, { clientX, clientY, columnEvents });
    },
    () => hideTooltip(byId('tooltip')),
  );
};

// ---- toolbar, search, keyboard ----

function walk(direction: 1 | -1): void {
  const cls = byId<HTMLSelectElement>('walk-kind').value as EventClass;
  const ix = state.index;
  const api = state.api;
  if (ix === null || api === null) return;
  const from = state.selected ?? (direction === 1 ? -1 : ix.meta.events);
  api.next(from, direction, cls, threadRow()).then(
    (next) => {
      if (next !== null && state.index === ix) void select(next);
    },
    (err: unknown) => showError((err as Error).message),
  );
}

function jumpToPeak(): void {
  const ix = state.index;
  const api = state.api;
  if (ix === null || api === null) return;
  // Once the panels' data has come: the total peak it found, event for event.
  const exact = state.indexTables?.peaks();
  if (exact !== undefined && (exact.total.event ?? exact.heap.event) !== null) return jumpTo((exact.total.event ?? exact.heap.event)!);
  // Before: the bucket with the most in use, then its fullest event, read from the index.
  const B = ix.meta.bucketSize;
  const k = Math.floor(ix.representative(0, ix.meta.events) / B);
  api.events(k * B, Math.min(ix.meta.events, (k + 1) * B)).then((bytes) => {
    const r = decodeRange(bytes);
    let best = 0;
    for (let i = 1; i < r.count; i++) if (r.above[i]! + r.heap[i]! > r.above[best]! + r.heap[best]!) best = i;
    if (state.index === ix) jumpTo(r.first + best);
  }, (err: unknown) => showError((err as Error).message));
}

/** Closes the search's list and gives the keys back to the page (n, p, + and the rest act on the chart again). */
function closeSearch(): void {
  byId('search-results').hidden = true;
  byId('search').blur();
}

/** Shows event e: zoomed in around it when it is out of view, or in a wide view whose events are not drawn one by one; then selected. */
function jumpTo(e: number): void {
  const [a, b] = chart.visibleEvents();
  if (e < a || e >= b || (b - a > 2000 && !(state.index?.covers(a, b) ?? false))) chart.zoomToEvents(Math.max(0, e - 200), Math.min(handle.events, e + 200));
  void select(e);
}

function runSearch(): void {
  const list = byId('search-results');
  const q = byId<HTMLInputElement>('search').value;
  const ix = state.index;
  if (ix === null || q.trim() === '') {
    list.hidden = true;
    return;
  }
  // A number (or #number) is an event to jump to.
  const number = /^\s*#?([\d,]+)\s*$/.exec(q);
  const n = number ? Number(number[1]!.replace(/,/g, '')) : NaN;
  const jump: HTMLElement[] = [];
  if (Number.isSafeInteger(n)) {
    const li = el('li', { tabindex: '0', class: 'jump' }, n < handle.events ? `Go to event ${n.toLocaleString('en-US')}` : `No event ${n.toLocaleString('en-US')}: the trace has ${handle.events.toLocaleString('en-US')}`);
    if (n < handle.events) {
      const go = (): void => {
        closeSearch();
        jumpTo(n);
      };
      li.addEventListener('click', go);
      li.addEventListener('keydown', (e) => e.key === 'Enter' && go());
    }
    jump.push(li);
  }
  const found: SiteMatch[] = findSitesIn(state.indexRun!, ix.meta.siteFirst, ix.meta.siteEvents, q, 30);
  fill(
    list,
    ...jump,
    ...(found.length === 0
      ? jump.length > 0 ? [] : [el('li', { class: 'empty' }, `nothing matches “${q}”`)]
      : found.map((s) => {
          const li = el('li', { tabindex: '0' }, s.label, el('span', { class: 'muted' }, ` ${plural(s.events, 'event')}`));
          const go = (): void => {
            closeSearch();
            setHighlight(new Int32Array(0));
            jumpTo(s.firstEvent);
          };
          li.addEventListener('click', go);
          li.addEventListener('keydown', (e) => e.key === 'Enter' && go());
          return li;
        })),
  );
  list.hidden = false;
}

byId('search').addEventListener('input', runSearch);
byId('search').addEventListener('keydown', (e) => {
  // Enter takes the first match, or only closes the list when nothing matches: either way the keys go back to the page.
  if (e.key === 'Enter') {
    const first = byId('search-results').querySelector('li[tabindex]') as HTMLElement | null;
    if (first) first.click();
    else closeSearch();
  }
  if (e.key === 'Escape') closeSearch();
});
// A press anywhere outside the box and its list closes the list (capture: the chart's zoom stops its mouse events).
document.addEventListener(
  'pointerdown',
  (e) => {
    const t = e.target as Node;
    if (!byId('search').contains(t) && !byId('search-results').contains(t)) byId('search-results').hidden = true;
  },
  true,
);

document.addEventListener('keydown', (e) => {
  if (keysAreTheControls(e.target) || e.ctrlKey || e.metaKey || e.altKey) return;
  const keys: Record<string, () => void> = {
    n: () => walk(1),
    ArrowRight: () => walk(1),
    p: () => walk(-1),
    ArrowLeft: () => walk(-1),
    k: jumpToPeak,
    '/': () => byId('search').focus(),
    // Zoom keys keep the selected event where it is on the screen (around the centre when nothing is selected).
    '+': () => chart.zoomBy(2, state.selected),
    '=': () => chart.zoomBy(2, state.selected),
    '-': () => chart.zoomBy(0.5, state.selected),
    '0': () => chart.resetZoom(),
    a: () => (byId<HTMLSelectElement>('walk-kind').value = 'alloc'),
    f: () => (byId<HTMLSelectElement>('walk-kind').value = 'free'),
    c: () => (byId<HTMLSelectElement>('walk-kind').value = 'call'),
    r: () => (byId<HTMLSelectElement>('walk-kind').value = 'return'),
  };
  const act = keys[e.key];
  if (act) {
    e.preventDefault();
    act();
  }
});

byId('peak').addEventListener('click', jumpToPeak);
byId('x-mode').addEventListener('change', applyXMode);
byId('thread').addEventListener('change', applyFilter);
byId('show-libc').addEventListener('change', applyLibcHeap);
byId('export-svg').addEventListener('click', () => download(new Blob([chartSvg(chart, exportTitle())], { type: 'image/svg+xml' }), `${state.traceTitle}.svg`));
byId('export-png').addEventListener('click', () => {
  chartPng(chart, exportTitle()).then(
    (blob) => download(blob, `${state.traceTitle}.png`),
    (e: unknown) => showError(`PNG export failed: ${(e as Error).message}`),
  );
});
byId('open').addEventListener('click', () => {
  if (backend.openDialog) {
    backend.openDialog().then((info) => info && loadFromHost(info), (e: unknown) => showError((e as Error).message));
  } else byId<HTMLInputElement>('open-file').click();
});
byId<HTMLInputElement>('open-file').addEventListener('change', (e) => {
  const f = (e.target as HTMLInputElement).files?.[0];
  if (f) void loadFile(f);
});
byId<HTMLSelectElement>('recent').addEventListener('change', (e) => {
  const p = (e.target as HTMLSelectElement).value;
  if (p === '') return;
  handle.ready = false;
  backend.openRecent(p).then(loadFromHost, (err: unknown) => showError(`Cannot open ${p}: ${(err as Error).message}`));
});
byId('reroot').addEventListener('click', () => byId<HTMLInputElement>('reroot-dir').click());
byId<HTMLInputElement>('reroot-dir').addEventListener('change', (e) => {
  const files = (e.target as HTMLInputElement).files;
  if (files && files.length > 0) source.useFolder(files);
});

// Drag and drop a trace anywhere on the page.
window.addEventListener('dragover', (e) => {
  e.preventDefault();
  byId('drop-hint').hidden = false;
});
window.addEventListener('dragleave', () => (byId('drop-hint').hidden = true));
window.addEventListener('drop', (e) => {
  e.preventDefault();
  byId('drop-hint').hidden = true;
  const f = e.dataTransfer?.files[0];
  if (f) void loadFile(f);
});

renderLegend(byId('legend'), VOCABULARY_NOTES);
setupProjector(chart);
backend.session().then(
  (info) => {
    if (info) void loadFromHost(info);
    else loadingTitle(null);
  },
  (e: unknown) => {
    loadingTitle(null);
    showError(`Cannot reach the viewer's host: ${(e as Error).message}`);
  },
);
