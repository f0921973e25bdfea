// The analysis package's tables as panels: summary, a firmware's RAM map, by function / site / thread / library, peak, leaks, leak causes, budgets, worst-case stack, linked frees, problems. Clicking a row highlights its events on the chart (index mode: jumps to its first event) and opens its source; a leak row or a linked free jumps to its event. The same panels in both modes: they read `PanelTables` and `PanelView`, which the decoded model or the host's streamed panels' data fill.
import type { AttributionBy, AttributionRow } from '../../../../analysis/attribution.js';
import { leakClassLabel, type LeakedBlock } from '../../../../analysis/leaks.js';
import type { LinkedFree } from '../../../../analysis/linked.js';
import type { PeakGroup } from '../../../../analysis/peak.js';
import { formatBytes, formatCount, plural } from '../../../../analysis/units.js';
import { el, fill } from '../dom.js';
import { TABLE_ROWS, type PanelTables } from '../tables.js';
import type { PanelView } from '../view-data.js';
import { table } from './table.js';
import { budgetsPanel } from './budgets-panel.js';
import { ramMapPanel } from './ram-map-panel.js';
import type { RamMap } from '../../../../analysis/ram-map.js';
import type { Budgets } from '../../../../analysis/budgets.js';
import { leakCausesPanel } from './leak-causes-panel.js';
import { stackPanel } from './stack-panel.js';
import { FlamePanel } from './flame-panel.js';
import { consumedPanel } from './consumed-panel.js';
import { BlockGroups } from '../../../../analysis/block-groups.js';
import type { FlameNode } from '../../../../analysis/call-paths.js';
import type { SourceMark } from '../source/source-pane.js';
import { COUNT_WORDS } from '../vocabulary.js';
import { PENDING_CALLS_WORDS, uncalledWords } from '../../../../analysis/report-text.js';

export interface PanelActions {
  /** Highlight the events of an attribution row and open its source. */
  attributionRow(by: AttributionBy, row: AttributionRow): void;
  /** Select an event (opens its source and detail). */
  goto(event: number): void;
  /** Open a source line (or the file with `marks`). */
  source(file: string | null, line: number | null, marks?: SourceMark[]): void;
  /** Highlight events (`label`: what they are) and open a source line. */
  highlight(events: Int32Array, label: string, file: string | null, line: number | null): void;
  /** Highlight a set of blocks' allocations. */
  blocks(blocks: number[], file: string | null, line: number | null): void;
  /** Say something in the status line (what an interaction could not do, and why). */
  note(text: string): void;
}

type PanelName = 'summary' | 'ram' | 'function' | 'site' | 'thread' | 'library' | 'peak' | 'leaks' | 'causes' | 'budgets' | 'stack' | 'linked' | 'flame' | 'consumed' | 'problems';
const TITLES: Record<PanelName, string> = {
  summary: 'Summary',
  ram: 'RAM map',
  function: 'By function',
  site: 'By site',
  thread: 'By thread',
  library: 'By library',
  peak: 'Heap peak',
  leaks: 'Leaks',
  causes: 'Leak causes',
  budgets: 'Budgets',
  stack: 'Stack: worst case',
  linked: 'Linked frees',
  flame: 'Flame graph',
  consumed: 'Consumed',
  problems: 'Problems',
};

const bytes = (n: number): string => formatBytes(n);

/** A table of the first `shown` of `total` rows says so. */
function more(body: HTMLElement, shown: number, total: number): HTMLElement {
  return total > shown ? el('div', {}, el('p', { class: 'empty' }, `First ${formatCount(shown)} of ${formatCount(total)}.`), body) : body;
}

export class Panels {
  /** A firmware's RAM map from the host (its tab is shown only then), and the budgets its bar marks. */
  ramMap: { map: RamMap; budgets: Budgets | null } | null = null;
  private current: PanelName = 'summary';
  private data: PanelView | null = null;
  private tables: PanelTables | null = null;
  private flame: FlamePanel | null = null;

  constructor(
    private readonly tabs: HTMLElement,
    private readonly body: HTMLElement,
    private readonly act: PanelActions,
  ) {}

  set(data: PanelView, tables: PanelTables): void {
    this.data = data;
    this.tables = tables;
    this.flame = null;
    fill(
      this.tabs,
      ...(Object.keys(TITLES) as PanelName[]).filter((name) => name !== 'ram' || this.ramMap !== null).map((name) => {
        const b = el('button', { type: 'button', 'data-panel': name, class: name === this.current ? 'active' : '' }, TITLES[name]);
        b.addEventListener('click', () => this.show(name));
        return b;
      }),
    );
    this.show(this.current);
  }

  show(name: PanelName): void {
    this.current = name;
    for (const b of Array.from(this.tabs.querySelectorAll('button'))) b.classList.toggle('active', b.dataset.panel === name);
    const d = this.data;
    const t = this.tables;
    if (d === null || t === null) return;
    fill(this.body, this.render(name, d, t));
  }

  /** Draws the panel shown again if it waits for data that has come (the flame graph, the consumed chart). */
  refresh(): void {
    if (this.current === 'flame' || this.current === 'consumed') this.show(this.current);
  }

  private render(name: PanelName, d: PanelView, t: PanelTables): HTMLElement {
    switch (name) {
      case 'summary':
        return this.summary(d, t);
      case 'function':
      case 'site':
      case 'thread':
      case 'library':
        return this.attribution(name, t);
      case 'peak':
        return this.peak(t);
      case 'leaks':
        return this.leaks(t);
      case 'causes':
        return leakCausesPanel(t.leakCauses(), t.run.program?.cwd ?? null, this.act);
      case 'ram':
        return this.ramMap === null ? el('p', { class: 'empty' }, 'No RAM map: not a firmware\'s trace.') : ramMapPanel(this.ramMap.map, this.ramMap.budgets, this.act);
      case 'budgets':
        return budgetsPanel(d.budgets, this.act);
      case 'stack':
        return stackPanel(t.stack(), t.run.program?.cwd ?? null, this.act);
      case 'linked':
        return this.linked(t.linked().frees, t.linked().count);
      case 'flame':
        if (d.flame === null) return el('p', { class: 'empty' }, 'Reading the call paths…');
        this.flame ??= new FlamePanel(d.flame, { frame: (path, n) => this.frame(path, n, t) });
        return this.flame.render(this.width());
      case 'consumed': {
        if (d.consumed === null) return el('p', { class: 'empty' }, 'Reading the live heap by site…');
        const groups = new BlockGroups(t.run);
        return consumedPanel(d.consumed, (key) => groups.siteOfKey(key)?.label ?? key, this.width(), (key) => this.site(key, t));
      }
      case 'problems':
        return table([{ label: 'severity', cell: (p) => p.severity }, { label: 'problem', cell: (p) => p.message }], d.summary.problems.list, null, 'no problems: the trace read cleanly');
    }
  }

  /** The width the drawn panels get. */
  private width(): number {
    return Math.max(320, this.body.clientWidth - 20);
  }

  /** A flame graph frame: the allocations made on its call path (and below it) highlighted, its function's source opened. */
  private frame(path: string[], n: FlameNode, t: PanelTables): void {
    // The allocations may be asked of the trace's index: shown when they come.
    void Promise.resolve(t.callPathAllocations(path)).then((events) => {
      if (typeof events !== 'string') return this.act.highlight(events, path.join(';'), n.file, n.line);
      this.act.source(n.file, n.line);
      this.act.note(`${path.join(';')}: ${events}.`);
    });
  }

  /** A consumed band: its site's events highlighted and its source opened (as its By site row does). */
  private site(key: string, t: PanelTables): void {
    const row = t.attribution('site').rows.find((r) => r.key === key);
    if (row !== undefined) this.act.attributionRow('site', row);
  }

  private summary(d: PanelView, t: PanelTables): HTMLElement {
    const s = d.summary;
    const n = t.blockCounts();
    const w = COUNT_WORDS;
    const cap = (word: string): string => word[0]!.toUpperCase() + word.slice(1);
    const rows: Array<[string, string]> = [
      ['Program', s.process.program ?? '?'],
      ['Run', s.end.description],
      ['Threads', String(s.threads.length)],
      ['Events', formatCount(s.events)],
      [cap(w.allocations), `${formatCount(n.allocations)} (${formatCount(n.allocations - n.byRealloc.allocations)} by malloc, calloc…, ${formatCount(n.byRealloc.allocations)} by realloc; ${bytes(s.bytesAllocated.requested)} requested)`],
      [cap(w.frees), `${formatCount(n.frees)} (${formatCount(n.frees - n.byRealloc.frees)} by free, ${formatCount(n.byRealloc.frees)} by realloc)`],
      ['Peak heap', `${bytes(s.peakHeap.requested.bytes)} at event ${s.peakHeap.requested.event ?? '—'}`],
      ['Peak stack', `${bytes(s.peakStack.bytes)} at event ${s.peakStack.event ?? '—'}`],
      ...summarised(s),
      ['Static', `${bytes(s.static.bytes)} in ${plural(s.static.objects, 'object')}`],
      ['Live at exit', `${plural(s.leaked.blocks, 'block')}, ${bytes(s.leaked.requestedBytes)}`],
      ...leftOut(s),
      ...pendingCalls(s),
      d.hostSeconds === undefined
        ? ['Decoded in', `${Math.round(d.decodeMs)} ms, summary in ${Math.round(d.tablesMs)} ms (in a worker, off the page's thread)`]
        : ['Computed in', `${d.hostSeconds.toFixed(1)} s on the host as it streamed the trace (opened through its index: the page holds no decoded trace)`],
    ];
    return table([{ label: '', cell: (r) => r[0] }, { label: '', cell: (r) => r[1] }], rows, null);
  }

  private attribution(by: 'function' | 'site' | 'thread' | 'library', tables: PanelTables): HTMLElement {
    const t = tables.attribution(by);
    const shown = t.rows.slice(0, TABLE_ROWS);
    const body = table<AttributionRow>(
      [
        { label: by, cell: (r) => r.label, sort: (r) => r.label },
        { label: 'max', cell: (r) => bytes(r.maxBytes), numeric: true, sort: (r) => r.maxBytes },
        { label: 'net', cell: (r) => bytes(r.netBytes), numeric: true, sort: (r) => r.netBytes },
        { label: 'bytes allocated', cell: (r) => bytes(r.bytesAllocated), numeric: true, sort: (r) => r.bytesAllocated },
        { label: 'bytes freed', cell: (r) => bytes(r.bytesFreed), numeric: true, sort: (r) => r.bytesFreed },
        { label: COUNT_WORDS.allocations, cell: (r) => formatCount(t.blocks.get(r.key)?.allocations ?? 0), numeric: true, sort: (r) => t.blocks.get(r.key)?.allocations ?? 0 },
        { label: COUNT_WORDS.frees, cell: (r) => formatCount(t.blocks.get(r.key)?.frees ?? 0), numeric: true, sort: (r) => t.blocks.get(r.key)?.frees ?? 0 },
        { label: COUNT_WORDS.reallocs, cell: (r) => formatCount(r.counts.realloc), numeric: true, sort: (r) => r.counts.realloc },
      ],
      shown,
      (row) => this.act.attributionRow(by, row),
      'no heap events',
    );
    return more(body, shown.length, t.total);
  }

  /** The heap peak and what was live at it; the total peak (the toolbar's button) named beside it, so the two are not confused. */
  private peak(t: PanelTables): HTMLElement {
    const { heap: p, total } = t.peaks();
    const go = el('button', { type: 'button', class: 'link', 'data-role': 'heap-peak' }, `Heap peak: ${bytes(p.peakBytes)} at event ${p.event ?? '—'} (${plural(p.liveBlocks, 'live block')})`);
    go.addEventListener('click', () => p.event !== null && this.act.goto(p.event));
    const toTotal = el('button', { type: 'button', class: 'link', 'data-role': 'total-peak' }, `${bytes(total.peakBytes)} at event ${total.event ?? '—'}`);
    toTotal.addEventListener('click', () => total.event !== null && this.act.goto(total.event));
    const aside = el('p', { class: 'hint' }, 'Total peak (heap + stack + static, the toolbar\'s Total peak): ', toTotal, ` = heap ${bytes(total.heapBytes)} + stack ${bytes(total.stackBytes)} + static ${bytes(total.staticBytes)}.`);
    const rows = table<PeakGroup>(
      [
        { label: 'site live at the peak', cell: (g) => g.label, sort: (g) => g.label },
        { label: 'blocks', cell: (g) => formatCount(g.blocks), numeric: true, sort: (g) => g.blocks },
        { label: 'bytes', cell: (g) => bytes(g.bytes), numeric: true, sort: (g) => g.bytes },
        { label: 'share', cell: (g) => `${(g.share * 100).toFixed(1)} %`, numeric: true },
      ],
      p.bySite,
      (g) => {
        if (p.event !== null) this.act.goto(p.event);
        this.act.source(g.file, g.line);
      },
      'nothing live at the peak',
    );
    return el('div', {}, go, aside, rows);
  }

  private leaks(t: PanelTables): HTMLElement {
    const l = t.leaks();
    if (!l.present) {
      const live: LeakedBlock[] = [];
      return el('div', {}, el('p', { class: 'empty' }, 'This run was not classified (it did not end through exit): no leak classes.'), table([], live, null));
    }
    const all = l.classes.flatMap((c) => c.sites.flatMap((s) => s.blocks));
    const blocks = all.slice(0, TABLE_ROWS);
    return more(table<LeakedBlock>(
      [
        { label: 'class', cell: (b) => leakClassLabel(b.class), cls: (b) => `leak-${b.class}` },
        { label: 'allocated at', cell: (b) => b.allocation.label },
        { label: 'bytes', cell: (b) => bytes(b.requestedBytes), numeric: true },
        { label: 'orphaned by', cell: (b) => b.orphanedBy?.at.label ?? '' },
      ],
      blocks,
      (b) => {
        const e = t.leakAllocEvent(b.block);
        if (e !== null) this.act.goto(e);
      },
      'no leaks: every block was freed',
    ), blocks.length, l.classes.reduce((n, c) => n + c.count, 0));
  }

  private linked(all: LinkedFree[], count: number): HTMLElement {
    const frees = all.slice(0, TABLE_ROWS);
    const t = table<LinkedFree>(
      [
        { label: 'event', cell: (f) => String(f.event), numeric: true },
        { label: 'free at', cell: (f) => f.at.label },
        { label: 'freed block from', cell: (f) => f.freed?.allocation.label ?? '?' },
        { label: 'linked', cell: (f) => String(f.blocks.length), numeric: true },
        { label: 'orphaned', cell: (f) => (f.orphaned ? `${f.orphaned} (${bytes(f.orphanedBytes)})` : ''), numeric: true },
      ],
      frees,
      (f) => this.act.goto(f.event),
      'no free had live blocks linked from the freed one',
    );
    return more(t, frees.length, count);
  }
}

/** The Summary's row for the functions built with `--mw-no-calls`, as the report's head says it; none without them. */
function leftOut(s: PanelView['summary']): Array<[string, string]> {
  if (s.uncalledFunctions === undefined || s.uncalledFunctions.length === 0) return [];
  const { lead, names, note } = uncalledWords(s.uncalledFunctions);
  return [['Left out', `${lead} ${names.join(', ')} (${note})`]];
}

/** The Summary's row for functions whose calls were written only where they mattered, as the report's head says it. */
function pendingCalls(s: PanelView['summary']): Array<[string, string]> {
  if (s.pendingCalls === undefined) return [];
  return [['Calls', `of ${plural(s.pendingCalls.functions, 'function')} ${PENDING_CALLS_WORDS}; the others are not shown (heap, leaks and stack as with every call recorded)`]];
}

/** Most functions named in the summarised row. */
const NAMED_FUNCTIONS = 40;

/** The Summary's row for summarised leaf call trees, each with the most stack it takes; none without them. */
function summarised(s: PanelView['summary']): Array<[string, string]> {
  const leaves = s.summarisedFunctions ?? [];
  if (leaves.length === 0) return [];
  const stack = (f: (typeof leaves)[number]) => (f.measured === true ? 'no heap work: deepest calls recorded' : f.stackBytes === null ? 'stack unknown' : `≤ ${bytes(f.stackBytes)}`);
  const shown = leaves.slice(0, NAMED_FUNCTIONS).map((f) => `${f.name} (${stack(f)})`);
  const more = leaves.length > shown.length ? `, … ${leaves.length - shown.length} more` : '';
  return [['Summarised', `calls of ${plural(leaves.length, 'function')} not recorded, their call trees known; peak stack counts the stack they take: ${shown.join(', ')}${more}`]];
}
