// The viewer page: loads a trace (from the host, a file dialog, drag and drop or the recent list), decodes it in a worker with a progress bar, and wires chart, detail, source, panels, search, keyboard and export together.
import type { AttributionBy, AttributionRow } from '../../../analysis/attribution.js';
import { callStackAt, eventDetail, type EventClass, type EventDetail, type StackEntry } from '../../../analysis/event-detail.js';
import { explainStack, traceNamesCallLines } from '../../../analysis/frame-detail.js';
import { allocationsOf, eventsOfGroup, findSites, findSitesIn, nextEventOfClass, type SiteMatch } from '../../../analysis/event-sets.js';
import type { Model, ThreadInfo } from '../../../analysis/model.js';
import { decodeRange, siteTableOf } from '../../../analysis/event-index.js';
import { IndexChartData } from './index-view.js';
import { eventsNotice } from './index-events.js';
import type { BuildState, IndexPanelsReply } from '../../../host/session-types.js';
import { chartSeries, distinctSteps, eventClassMasks, instrumentedHeap } from '../../../analysis/lod.js';
import { formatBytesFine, plural } from '../../../analysis/units.js';
import { describeEnd } from '../../../analysis/summary.js';
import { pickBackend, summariesBuilt, type Backend, type SessionInfo } from './backend.js';
import { Chart, type DrawnValues } from './chart/chart.js';
import { chartData, type ChartData } from './chart/columns.js';
import { chartPng, chartSvg, download, type ExportTitle } from './chart/export.js';
import { renderLegend } from './chart/legend.js';
import { VOCABULARY_NOTES } from './vocabulary.js';
import { noSourceText, renderDetail, selectionMarks } from './detail-pane.js';
import { byId, el, fill, keysAreTheControls } from './dom.js';
import { Panels } from './panels/panels.js';
import { setupProjector } from './projector.js';
import { SourcePane } from './source/source-pane.js';
import { budgetMarks, decodeInWorker } from './decode.js';
import { Tables } from './tables.js';
import { IndexTables } from './index-tables.js';
import { hideTooltip, showTooltip } from './tooltip.js';
import type { ViewData } from './view-data.js';
import './styles.css';

/** Timings and controls for automation (tests, the benchmark): read-only views of the page's own state. */
interface ViewHandle {
  ready: boolean;
  /** 'index' while a trace opened through the host's index is shown. */
  mode: 'whole' | 'index';
  error: string | null;
  timings: { start: number; bytes: number; decoded: number; firstChart: number; detailShown: number };
  /** Index mode: milliseconds each window of events took to arrive. */
  fetchTimes: number[];
  /** Index mode: whether events [a, b) have arrived (drawn one by one, not from summaries). */
  hasEvents(a: number, b: number): boolean;
  /** Index mode: whether the fine summaries of events [a, b) have arrived (drawn instead of the buckets'). */
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
  view: ViewData | null;
  tables: Tables | null;
  /** Chart columns of all threads, and those drawn (one thread's when the thread filter is set, else the same). */
  allData: ChartData | null;
  data: ChartData | null;
  /** The selected event, or null. */
  selected: number | null;
  /** The trace's name: the title of exports. */
  traceTitle: string;
  /** The heap of instrumented code alone (`instrumentedHeap`), made the first time the libc heap is hidden. */
  instrumentedHeap: Float64Array | null;
  /** Index mode: the chart's summaries and fetched events, and the run's sites (for names, search, call lines). */
  index: IndexChartData | null;
  indexRun: Pick<Model, 'sites' | 'program'> | null;
  /** Index mode: the panels' tables the host computed as it streamed the trace, once they have come. */
  indexTables: IndexTables | null;
}

const backend: Backend = pickBackend();
const state: PageState = { hostSession: null, view: null, tables: null, allData: null, data: null, selected: null, traceTitle: 'trace', instrumentedHeap: null, index: null, indexRun: null, indexTables: null };

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
    if (!state.view) return;
    setHighlight(allocationsOf(state.view.model, blocks));
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
  const view = state.view;
  const program = view?.summary.process.program ?? null;
  const [a, b] = chart.visibleEvents();
  const thread = byId<HTMLSelectElement>('thread');
  const whose = thread.value === 'all' ? '' : `, ${thread.selectedOptions[0]?.textContent ?? ''}`;
  return {
    title: program === null ? state.traceTitle : `${program.split('/').pop()} — ${state.traceTitle}`,
    subtitle: `events ${a.toLocaleString('en-US')}–${Math.max(a, b - 1).toLocaleString('en-US')} of ${(view?.model.events.count ?? 0).toLocaleString('en-US')}${whose}`,
  };
}

/** Decodes trace bytes in the worker, with the progress bar; resolves with everything the page shows. */
function decode(bytes: ArrayBuffer, budgets: SessionInfo['budgets']): Promise<ViewData> {
  let data: ViewData | null = null;
  const shown = decodeInWorker(
    bytes,
    budgets,
    (phase, fraction) => progress(`Decoding: ${phase}`, fraction),
    (extras) => {
      // The flame graph and consumed chart come after: the view shown by then gets them (a later one has its own worker).
      if (data !== null) Object.assign(data, extras);
      if (data !== null && state.view === data) panels.refresh();
    },
  );
  return shown.then((v) => (data = v));
}

/** The thread filter's choices: all threads, or each thread row of the trace (the model's, or the index's). */
function threadOptions(threads: readonly Pick<ThreadInfo, 'index' | 'osTid'>[]): void {
  const sel = byId<HTMLSelectElement>('thread');
  fill(sel, el('option', { value: 'all' }, 'all threads'), ...threads.map((t, row) => el('option', { value: String(row) }, `thread ${t.index}${t.osTid !== null ? ` (tid ${t.osTid})` : ''}`)));
}

/** The thread row the filter shows, or null for all threads. */
function threadRow(): number | null {
  const value = byId<HTMLSelectElement>('thread').value;
  return value === 'all' ? null : Number(value);
}

/** Index mode: the chart drawn anew from the index under the toolbar's thread filter and libc toggle. */
function applyIndexFilter(ix: IndexChartData): void {
  ix.setFilter({ thread: threadRow(), instrumented: !byId<HTMLInputElement>('show-libc').checked });
  state.data = ix.data;
  chart.setData(ix.data, ix.kinds);
}

function applyThread(): void {
  if (state.index !== null) return applyIndexFilter(state.index);
  const view = state.view;
  if (!view) return;
  const row = threadRow();
  if (row === null && state.allData) state.data = state.allData;
  else state.data = chartData(chartSeries(view.model, row, view.statics, heapSeries(view)), eventClassMasks(view.model, row), view.times);
  chart.setData(state.data, view.model.events.kind);
}

/** The heap the chart draws: every live block, or, with "libc heap" unticked, those of instrumented code alone. */
function heapSeries(view: ViewData): Float64Array {
  if (byId<HTMLInputElement>('show-libc').checked) return view.model.events.heapRequested;
  state.instrumentedHeap ??= instrumentedHeap(view.model);
  return state.instrumentedHeap;
}

/**
 * The "libc heap" toggle: redraws the heap with or without the blocks allocated inside libc or uninstrumented code,
 * and when they are hidden says how many there were and how much of them was live at most, so the totals stay whole.
 */
function applyLibcHeap(): void {
  const ix = state.index;
  if (ix !== null) {
    applyIndexFilter(ix);
    // The index counts the blocks allocated elsewhere and the most of them live at once as it is built.
    fill(byId('status-line'), byId<HTMLInputElement>('show-libc').checked ? '' : libcHidden(ix.meta.libcBlocks, ix.meta.maxLibcHeap));
    return;
  }
  const view = state.view;
  if (!view) return;
  state.allData = chartData(chartSeries(view.model, null, view.statics, heapSeries(view)), eventClassMasks(view.model), view.times);
  applyThread();
  if (byId<HTMLInputElement>('show-libc').checked) {
    fill(byId('status-line'));
    return;
  }
  const { blocks, events } = view.model;
  let count = 0;
  for (let b = 0; b < blocks.count; b++) count += blocks.interposed[b]!;
  let hidden = 0;
  for (let i = 0; i < events.count; i++) hidden = Math.max(hidden, events.heapRequested[i]! - state.instrumentedHeap![i]!);
  fill(byId('status-line'), libcHidden(count, hidden));
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
  if (select.value === 'time' && ix !== null && !(ix.data.times[0]! < ix.data.times[ix.meta.events - 1]!)) {
    select.value = 'events';
    fill(byId('status-line'), 'Wall time not used: all the events share one timestamp (the runtime reads the clock once every 256 records of a thread, and this run is shorter); the x axis stays in event order.');
  }
  const view = state.view;
  if (select.value === 'time' && view && view.times.length > 0 && distinctSteps(view.times) < 2) {
    select.value = 'events';
    const n = view.times.length;
    fill(
      byId('status-line'),
      `Wall time not used: ${n === 1 ? 'the one event has' : `all ${n.toLocaleString('en-US')} events share`} one timestamp (the runtime reads the clock once every 256 records of a thread, and this run is shorter); the x axis stays in event order.`,
    );
  }
  const mode = select.value === 'time' ? 'time' : 'events';
  if (mode !== chart.xMode) chart.setMode(mode);
}

async function show(v: ViewData, name: string): Promise<void> {
  leaveIndexMode();
  state.view = v;
  state.traceTitle = name;
  state.selected = null;
  handle.events = v.model.events.count;
  shownTitle = `${name} — ${plural(v.model.events.count, 'event')}`;
  title(shownTitle);
  threadOptions(v.model.threads);
  state.instrumentedHeap = null;
  state.allData = chartData(chartSeries(v.model, null, v.statics, heapSeries(v)), eventClassMasks(v.model), v.times);
  state.data = state.allData;
  chart.budgets = budgetMarks(v);
  chart.marks = { selected: null, related: new Int32Array(0), orphaned: new Int32Array(0), highlight: new Int32Array(0) };
  fill(byId('status-line'));
  chart.setData(state.data, v.model.events.kind);
  applyXMode();
  handle.timings.firstChart = performance.now();
  state.tables = new Tables(v.model, state.hostSession?.stack ?? null);
  panels.set(v, state.tables);
  source.reset();
  fill(byId('detail'), el('p', { class: 'hint' }, 'Click a bar to see its source line, its call stack and, for a heap event, the other end of its block.'));
  if (state.hostSession?.budgetProblem) showError(`Budgets not drawn: ${state.hostSession.budgetProblem}`);
  handle.ready = true;
}

async function loadBytes(bytes: ArrayBuffer, name: string, budgets: SessionInfo['budgets']): Promise<void> {
  handle.ready = false;
  showError(null);
  handle.timings.bytes = performance.now();
  progress('Decoding', 0);
  try {
    const v = await decode(bytes, budgets);
    handle.timings.decoded = performance.now();
    progress(null);
    await show(v, name);
  } catch (e) {
    progress(null);
    loadingTitle(null);
    showError(`Cannot show ${name}: ${(e as Error).message}`);
  }
}

async function loadFromHost(info: SessionInfo): Promise<void> {
  handle.ready = false;
  state.hostSession = info;
  panels.ramMap = info.ramMap ? { map: info.ramMap, budgets: info.budgets } : null;
  recentList(info);
  loadingTitle(info.trace.name);
  if (info.mode === 'index' && backend.index !== null) return loadIndex(info, backend.index);
  progress(`Reading ${info.trace.name}`, 0);
  try {
    const bytes = await backend.traceBytes((f) => progress(`Reading ${info.trace.name}`, f));
    await loadBytes(bytes, info.trace.name, info.budgets);
  } catch (e) {
    progress(null);
    loadingTitle(null);
    showError(`Cannot read ${info.trace.name}: ${(e as Error).message}`);
  }
}

/** A trace the user handed the page directly (file input, drop): sources come only from a chosen folder. */
async function loadFile(file: File): Promise<void> {
  handle.ready = false;
  state.hostSession = null;
  panels.ramMap = null;
  loadingTitle(file.name);
  progress(`Reading ${file.name}`, 0);
  await loadBytes(await file.arrayBuffer(), file.name, null);
}

/** Back to whole mode (a whole trace is shown): the index's data dropped, the controls on again. */
function leaveIndexMode(): void {
  if (state.index === null) return;
  byId('events-state').hidden = true;
  const time = byId<HTMLSelectElement>('x-mode').querySelector<HTMLOptionElement>('option[value=time]')!;
  time.disabled = false;
  time.title = '';
  state.index = null;
  state.indexRun = null;
  state.indexTables = null;
  handle.mode = 'whole';
  chart.onTransform = () => {};
}

/**
 * A trace opened through the host's index: waits for the index (its build's progress in the bar), then draws the
 * chart from its summaries; the events in view are fetched as the view narrows (IndexChartData), details on a click.
 */
async function loadIndex(info: SessionInfo, api: NonNullable<Backend['index']>): Promise<void> {
  showError(null);
  handle.timings.bytes = performance.now();
  try {
    const status = await summariesBuilt(api.status, (phase, fraction) => progress(`Indexing ${info.trace.name}: ${phase}`, fraction));
    if (status.state === 'failed') throw new Error(status.message);
    const meta = status.meta;
    const summary = new Float64Array(await api.summary());
    handle.timings.decoded = performance.now();
    progress(null);
    state.view = null;
    state.tables = null;
    state.allData = null;
    state.instrumentedHeap = null;
    const data = new IndexChartData(meta, summary, api.eventsWatch?.latestWindow() ?? api);
    state.index = data;
    state.indexRun = { sites: siteTableOf(meta), program: meta.program };
    state.traceTitle = info.trace.name;
    state.selected = null;
    handle.mode = 'index';
    handle.events = meta.events;
    shownTitle = `${info.trace.name} — ${plural(meta.events, 'event')} (through its index)`;
    title(shownTitle);
    // The thread filter lists the index's threads; it and the libc toggle draw from the index's thread table and instrumented heap.
    threadOptions(meta.threads);
    byId<HTMLSelectElement>('x-mode').value = 'events';
    data.setFilter({ thread: null, instrumented: !byId<HTMLInputElement>('show-libc').checked });
    state.data = data.data;
    chart.budgets = [];
    chart.marks = { selected: null, related: new Int32Array(0), orphaned: new Int32Array(0), highlight: new Int32Array(0) };
    data.onWindow = () => chart.redraw();
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
    handle.timings.firstChart = performance.now();
    source.reset();
    fill(
      byId('status-line'),
      `Opened through its index: ${meta.buckets.toLocaleString('en-US')} summaries of ${meta.bucketSize.toLocaleString('en-US')} events each${backend.name === 'file' ? '' : `, finer ones of ${meta.fineSize.toLocaleString('en-US')} events for the part in view`}; the events themselves are ${backend.name === 'file' ? 'in this report only where the notice above says' : 'read from the host when you zoom in'}.`,
    );
    void indexPanels(api, data, info);
    followEvents(api, data, status.events);
    fill(byId('detail'), el('p', { class: 'hint' }, 'Click a bar to see its source line, its call stack and, for a heap event, the other end of its block. Type an event number in the search box to jump to it.'));
    handle.ready = true;
  } catch (e) {
    progress(null);
    loadingTitle(null);
    showError(`Cannot show ${info.trace.name}: ${(e as Error).message}`);
  }
}

/** Why the wall-time axis waits in index mode while the events are built. */
const NO_TIMES_YET = "the chart's summaries are built first, without times (reading the trace's times would slow the first chart); the wall-time axis comes with the events";

/**
 * Index mode: the wall-time choice of the x axis, off with its reason while the summaries carry no times; when the
 * events are ready, the buckets' times taken from the whole index's summaries and the choice on.
 */
function timeChoice(api: NonNullable<Backend['index']>, ix: IndexChartData, events: BuildState): void {
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

/** Index mode: the notice of the events while the host builds them (index-events.ts), until they are ready; the wall-time choice with them. */
function followEvents(api: NonNullable<Backend['index']>, ix: IndexChartData, events: BuildState | undefined): void {
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
 * Index mode's panels: whole mode's panels, from the data the host computes as it streams the trace (IndexTables),
 * its progress shown until it comes (a report file carries them). Where there are none, the host's report instead.
 */
async function indexPanels(api: NonNullable<Backend['index']>, ix: IndexChartData, info: SessionInfo): Promise<void> {
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
      state.indexTables = new IndexTables(state.indexRun!, r.panels);
      panels.set(state.indexTables.view(), state.indexTables);
      return;
    }
    if (r.state === 'failed') return indexReportPanel(api, ix, info, r.message);
    const how = r.state === 'waiting' ? (r.for === undefined ? 'starting' : `waiting for ${r.for}`) : `${Math.floor(r.fraction * 100)} %, ${r.phase}`;
    const events = api.eventsWatch?.current;
    const report = reportShown ? '' : events?.state === 'building' ? ` The text report comes after the events are indexed (${Math.floor(events.fraction * 100)}%).` : '';
    fill(waiting, `The host is computing the tables, flame graph and budgets as it streams the trace (${how})…${report}`);
    if (!reportShown) {
      const report = await api.report().catch(() => null);
      if (state.index !== ix) return;
      if (report?.state === 'ready') {
        reportShown = true;
        byId('panel-body').append(el('p', { class: 'hint' }, `Meanwhile, \`cc-memwrap report --by function --peak --leaks ${info.trace.name}\`, computed on the host as it streamed the trace:`), el('pre', { class: 'report-text' }, report.text));
      }
    }
    await new Promise((done) => setTimeout(done, 500));
  }
}

/** Index mode: an attribution row's first event, jumped to (its events are not listed one by one: that needs the whole trace decoded). */
function jumpToRow(tables: IndexTables, by: 'function' | 'site' | 'thread' | 'library', row: AttributionRow): void {
  const e = tables.firstEventOf(by, row);
  if (e === null) return fill(byId('status-line'), `${row.label}: no heap event to jump to.`);
  setHighlight(new Int32Array(0));
  jumpTo(e);
  fill(
    byId('status-line'),
    `${row.label}: its first heap event, ${e.toLocaleString('en-US')}. Highlighting all of a row's events needs the whole trace decoded, which the viewer does not do for a trace opened through its index.`,
  );
}

/**
 * Index mode's panel where the host has no panels' data (`why`): the report the host computes by streaming the trace
 * once (summary, heap by function, peaks, leaks), when it is ready.
 */
async function indexReportPanel(api: NonNullable<Backend['index']>, ix: IndexChartData, info: SessionInfo, why: string): Promise<void> {
  fill(byId('panel-tabs'), el('button', { type: 'button', class: 'active' }, 'Report'));
  const note = `No interactive tables, flame graph or budgets: ${why}. This is \`cc-memwrap report --by function --peak --leaks ${info.trace.name}\`, computed on the host as it streams the trace.`;
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

function recentList(info: SessionInfo): void {
  const sel = byId<HTMLSelectElement>('recent');
  fill(sel, el('option', { value: '' }, 'Recent…'), ...info.recent.map((r) => el('option', { value: r.path, title: r.path }, r.name)));
  // An empty list (a fresh machine, or the HTML report, which has none) is not offered.
  sel.hidden = info.recent.length === 0;
}

// ---- selection ----

function setHighlight(events: Int32Array): void {
  chart.marks = { ...chart.marks, highlight: events };
  chart.redraw();
}

function highlightRow(by: AttributionBy, row: AttributionRow): void {
  if (state.indexTables !== null && by !== 'file' && by !== 'entry' && by !== 'library-function') return jumpToRow(state.indexTables, by, row);
  if (!state.view) return;
  highlight(eventsOfGroup(state.view.model, { by }, row.key), row.label, row.file, row.line);
}

/** Highlights events on the chart, says how many in the status line, opens the source line they are named by. */
function highlight(events: Int32Array, label: string, file: string | null, line: number | null): void {
  setHighlight(events);
  fill(byId('status-line'), `${label}: ${events.length.toLocaleString('en-US')} ${events.length === 1 ? 'event' : 'events'} highlighted`);
  if (file !== null) void source.show(file, line === null ? [] : [{ line, kind: 'selected' }]);
}

/** Selects an event: chart marks, detail, call stack, source with its related lines. */
function select(e: number): void {
  if (state.index !== null) {
    void selectIndexed(e);
    return;
  }
  const view = state.view;
  if (!view) return;
  const m = view.model;
  if (e < 0 || e >= m.events.count) return;
  state.selected = e;
  showSelection(eventDetail(m, e, view.statics, view.orphanedBy), callStackAt(m, e), m, view.summary.end.description);
}

/** The latest selection asked of the host: an older answer arriving late is dropped. */
let selecting = 0;

/** Index mode: the event's detail and call stack from the host, shown as select() shows them. */
async function selectIndexed(e: number): Promise<void> {
  const api = backend.index;
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

chart.onPick = (e) => select(e);
/** Index mode: the latest hover asked of the host (older answers are dropped), and the last detail it gave. */
let hovering = 0;
let hovered: EventDetail | null = null;
chart.onHover = (e, clientX, clientY, columnEvents) => {
  const view = state.view;
  const api = backend.index;
  if (e !== null && state.index !== null && api !== null) {
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
    return;
  }
  hovering++;
  if (e === null || !view) hideTooltip(byId('tooltip'));
  else showTooltip(byId('tooltip'), byId('chart-area'), eventDetail(view.model, e, view.statics, view.orphanedBy), { clientX, clientY, columnEvents });
};

// ---- toolbar, search, keyboard ----

function walk(direction: 1 | -1): void {
  const cls = byId<HTMLSelectElement>('walk-kind').value as EventClass;
  const ix = state.index;
  if (ix !== null && backend.index !== null) {
    const from = state.selected ?? (direction === 1 ? -1 : ix.meta.events);
    backend.index.next(from, direction, cls, threadRow()).then(
      (next) => {
        if (next !== null && state.index === ix) select(next);
      },
      (err: unknown) => showError((err as Error).message),
    );
    return;
  }
  const view = state.view;
  if (!view) return;
  const threadValue = byId<HTMLSelectElement>('thread').value;
  const next = nextEventOfClass(view.model, state.selected ?? (direction === 1 ? -1 : view.model.events.count), direction, cls, threadValue === 'all' ? null : Number(threadValue));
  if (next !== null) select(next);
}

function jumpToPeak(): void {
  const ix = state.index;
  // Index mode, once the host's panels' data has come: the total peak it found, event for event.
  const exact = state.indexTables?.peaks();
  if (ix !== null && exact !== undefined && (exact.total.event ?? exact.heap.event) !== null) return jumpTo((exact.total.event ?? exact.heap.event)!);
  if (ix !== null && backend.index !== null) {
    // The bucket with the most in use, then its fullest event, read from the host.
    const B = ix.meta.bucketSize;
    const k = Math.floor(ix.representative(0, ix.meta.events) / B);
    backend.index.events(k * B, Math.min(ix.meta.events, (k + 1) * B)).then((bytes) => {
      const r = decodeRange(bytes);
      let best = 0;
      for (let i = 1; i < r.count; i++) if (r.above[i]! + r.heap[i]! > r.above[best]! + r.heap[best]!) best = i;
      if (state.index === ix) jumpTo(r.first + best);
    }, (err: unknown) => showError((err as Error).message));
    return;
  }
  if (!state.tables) return;
  const p = state.tables.peaks();
  const e = p.total.event ?? p.heap.event;
  if (e !== null) select(e);
}

/** Closes the search's list and gives the keys back to the page (n, p, + and the rest act on the chart again). */
function closeSearch(): void {
  byId('search-results').hidden = true;
  byId('search').blur();
}

/** Shows event e: zoomed in around it when the view is wide (its bars one by one), then selected. */
function jumpTo(e: number): void {
  const [a, b] = chart.visibleEvents();
  if (b - a > 2000 || e < a || e >= b) chart.zoomToEvents(Math.max(0, e - 200), Math.min(handle.events, e + 200));
  select(e);
}

function runSearch(): void {
  const list = byId('search-results');
  const q = byId<HTMLInputElement>('search').value;
  const view = state.view;
  const ix = state.index;
  if ((!view && !ix) || q.trim() === '') {
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
  const found: SiteMatch[] = ix !== null ? findSitesIn(state.indexRun!, ix.meta.siteFirst, ix.meta.siteEvents, q, 30) : findSites(view!.model, q, 30);
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
            if (state.index !== null) jumpTo(s.firstEvent);
            else select(s.firstEvent);
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
byId('thread').addEventListener('change', applyThread);
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
