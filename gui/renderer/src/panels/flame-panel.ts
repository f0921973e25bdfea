// The flame graph panel: heap and stack by call path (analysis/call-paths.ts, folded over the trace's records), the
// outermost frame on top and each callee below its caller, as wide as its share of the metric chosen (for the stack,
// an icicle of maxima: each frame's deepest stack, callees sharing their caller's width in proportion, the deepest
// path outlined). A search box marks the frames whose function or file matches; clicking a frame zooms into it (the
// path above it leads back), opens its source line and highlights the allocations made on its call path on the chart.
import { hierarchy, partition, type HierarchyNode, type HierarchyRectangularNode } from 'd3';
import { CALL_PATH_METRICS, METRIC_MEANING, OTHER_FRAME, UNINSTRUMENTED_FRAME, type CallPathMetric, type FlameNode, type FlameTree } from '../../../../analysis/call-paths.js';
import { formatBytesFine, formatCount } from '../../../../analysis/units.js';
import { el, fill, pageZoom } from '../dom.js';

const SVG = 'http://www.w3.org/2000/svg';
/** At 100 %: a frame's height, the least width of a frame drawn with its name, a character's width (all grow with the page's zoom). */
const ROW = 18;
const LABEL_MIN = 28;
const CHAR_PX = 7;

export interface FlameActions {
  /** A frame clicked: its call path (function names, outermost first) and its node. */
  frame(path: string[], node: FlameNode): void;
}

type Rect = HierarchyRectangularNode<FlameNode>;

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  return node;
}

/** A warm colour per function name (the same name, the same colour); the synthetic frames grey. */
function colour(name: string): string {
  if (name === UNINSTRUMENTED_FRAME || name === OTHER_FRAME || name.startsWith('(')) return '#ced4da';
  let h = 0;
  for (let i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) >>> 0;
  return `hsl(${10 + (h % 40)}, ${70 + (h % 20)}%, ${58 + ((h >> 8) % 14)}%)`;
}

/** The tree without the frames of libc or uninstrumented code. */
function withoutLibc(n: FlameNode): FlameNode {
  return { ...n, children: n.children.filter((c) => c.name !== UNINSTRUMENTED_FRAME).map(withoutLibc) };
}

export class FlamePanel {
  private metric: CallPathMetric = 'allocated';
  private search = '';
  private libc = true;
  /** The names from the root down to the frame zoomed into ([] = the whole tree). */
  private focus: string[] = [];
  private readonly box = el('div', { class: 'flame' });

  constructor(
    private readonly tree: FlameTree | string,
    private readonly act: FlameActions,
  ) {}

  /** The panel, drawn `width` px wide. */
  render(width: number): HTMLElement {
    if (typeof this.tree === 'string') return el('p', { class: 'empty' }, `No flame graph: ${this.tree}`);
    this.draw(width);
    return this.box;
  }

  private controls(width: number): HTMLElement {
    const metric = el('select', { 'data-role': 'flame-metric' }, ...CALL_PATH_METRICS.map((m) => el('option', { value: m, title: METRIC_MEANING[m] }, m)));
    metric.value = this.metric;
    metric.addEventListener('change', () => {
      this.metric = metric.value as CallPathMetric;
      this.draw(width);
    });
    const find = el('input', { type: 'search', 'data-role': 'flame-search', placeholder: 'Mark frames: function or file' });
    find.value = this.search;
    find.addEventListener('input', () => {
      this.search = find.value;
      this.draw(width, true);
    });
    const libc = el('input', { type: 'checkbox', 'data-role': 'flame-libc' });
    libc.checked = this.libc;
    libc.addEventListener('change', () => {
      this.libc = libc.checked;
      this.draw(width);
    });
    const libcLabel = el('label', { title: 'Heap blocks allocated inside libc or uninstrumented code (a stdio buffer, say): untick to hide them from the flame graph' }, libc, ' libc heap');
    return el('div', { class: 'flame-controls' }, el('label', {}, 'Metric ', metric), find, libcLabel);
  }

  /** Redraws; `keepSearchFocus` keeps the caret in the search box while typing. */
  private draw(width: number, keepSearchFocus = false): void {
    const tree = this.tree as FlameTree;
    const controls = this.controls(width);
    const base = this.libc ? tree.root : withoutLibc(tree.root);
    const i = CALL_PATH_METRICS.indexOf(this.metric);
    const root = hierarchy(base, (n) => n.children);
    // What each frame stands for: a sum of its own and its callees' values, or (stack) the deepest of them.
    const shownValue = this.metric === 'stack' ? deepestOf(root, i) : summed(root, i);
    const deepPath = this.metric === 'stack' ? deepestPath(root, shownValue) : new Set<HierarchyNode<FlameNode>>();
    // The zoomed frame, found again by its path (the metric or the toggle may have changed the tree's shape).
    let top: Rect | null = null;
    const laid = partition<FlameNode>().size([width, 1])(root);
    top = laid;
    for (const name of this.focus) {
      const next: Rect | undefined = top.children?.find((c) => c.data.name === name);
      if (next === undefined) break;
      top = next;
    }
    const total = shownValue(laid);
    const unit = (v: number): string => (this.metric === 'count' ? formatCount(v) : formatBytesFine(v));
    const notes: HTMLElement[] = [];
    if (tree.pruned > 0) notes.push(el('p', { class: 'note' }, `${formatCount(tree.pruned)} of ${formatCount(tree.nodes)} call paths, the least of every metric, are folded into "${OTHER_FRAME}" frames.`));
    if (!this.libc) notes.push(el('p', { class: 'note' }, `Hidden: frames of allocations inside libc or uninstrumented code (${UNINSTRUMENTED_FRAME}).`));
    if (this.metric === 'stack' && total > 0) notes.push(el('p', { class: 'note', 'data-role': 'flame-width' }, stackWidthNote(total)));
    if (total === 0) {
      fill(this.box, controls, ...notes, el('p', { class: 'empty' }, `nothing to draw: no ${METRIC_MEANING[this.metric]}`));
      return;
    }
    const trail = this.trail(top, width, shownValue);
    const x0 = top.x0;
    const scale = width / Math.max(1e-9, top.x1 - top.x0);
    const depth0 = top.depth;
    const shown = laid.descendants().filter((d) => d.depth > 0 && d.x1 > top!.x0 && d.x0 < top!.x1 && (d.depth > depth0 || d === top || isAncestor(d, top!)) && (d.x1 - d.x0) * scale >= 0.5);
    const rows = Math.max(1, ...shown.map((d) => d.depth));
    const zoom = pageZoom();
    const [row, labelMin, charPx] = [ROW, LABEL_MIN, CHAR_PX].map((v) => Math.round(v * zoom)) as [number, number, number];
    const pic = svg('svg', { class: 'flame-graph', width, height: rows * row, 'data-metric': this.metric });
    const needle = this.search.trim().toLowerCase();
    for (const d of shown) {
      const left = Math.max(0, (d.x0 - x0) * scale);
      const w = Math.min(width, (d.x1 - x0) * scale) - left;
      const g = svg('g', { class: 'frame', transform: `translate(${left},${(d.depth - 1) * row})` });
      const match = needle !== '' && (d.data.name.toLowerCase().includes(needle) || (d.data.file ?? '').toLowerCase().includes(needle));
      const r = svg('rect', { width: Math.max(0, w - 1), height: row - 1, fill: match ? '#e64980' : colour(d.data.name) });
      if (needle !== '' && !match) r.setAttribute('opacity', '0.45');
      if (match) g.classList.add('match');
      if (deepPath.has(d)) {
        g.classList.add('deepest');
        r.setAttribute('stroke', '#212529');
        r.setAttribute('stroke-width', '2');
      }
      const value = shownValue(d);
      const tip = svg('title', {});
      tip.textContent = `${d.data.name}${d.data.file ? `  ${d.data.file}:${d.data.line}` : ''}\n${unit(value)} (${((value / total) * 100).toFixed(1)} %)`;
      g.append(tip, r);
      if (w >= labelMin) {
        const chars = Math.floor((w - 6) / charPx);
        const label = svg('text', { x: 3, y: row - Math.round(5 * zoom) });
        label.textContent = d.data.name.length > chars ? `${d.data.name.slice(0, Math.max(1, chars - 1))}…` : d.data.name;
        g.append(label);
      }
      g.addEventListener('click', () => {
        this.focus = pathOf(d);
        this.draw(width);
        this.act.frame(this.focus, d.data);
      });
      pic.append(g);
    }
    fill(this.box, controls, ...notes, trail, pic);
    if (keepSearchFocus) {
      const find = this.box.querySelector<HTMLInputElement>('[data-role=flame-search]')!;
      find.focus();
      find.setSelectionRange(find.value.length, find.value.length);
    }
  }

  /** "all › main › build": each step zooms back to that frame. */
  private trail(top: Rect, width: number, shownValue: (d: HierarchyNode<FlameNode>) => number): HTMLElement {
    const steps = top.ancestors().reverse();
    const total = shownValue(steps[0]!);
    const share = total > 0 ? ` — ${((shownValue(top) / total) * 100).toFixed(1)} % of the whole` : '';
    return el(
      'p',
      { class: 'flame-trail' },
      ...steps.flatMap((s, k) => {
        const b = el('button', { type: 'button', class: 'link', 'data-role': k === 0 ? 'flame-reset' : 'flame-step' }, k === 0 ? 'all' : s.data.name);
        b.addEventListener('click', () => {
          this.focus = pathOf(s);
          this.draw(width);
        });
        return k === 0 ? [b] : [' › ', b];
      }),
      steps.length > 1 ? share : '',
    );
  }
}

/**
 * The stack as an icicle of maxima: each frame's deepest stack (its own entry's or a callee's, the most, never a sum)
 * is what it shows, and as d3's partition lays callees side by side inside their caller, each is given the share of
 * its caller's width its deepest stack has among theirs (set as the nodes' values, which the layout reads). Returns
 * the deepest stack of a node.
 */
function deepestOf(root: HierarchyNode<FlameNode>, metric: number): (d: HierarchyNode<FlameNode>) => number {
  const deepest = new Map<HierarchyNode<FlameNode>, number>();
  root.eachAfter((n) => deepest.set(n, Math.max(n.data.values[metric]!, ...(n.children ?? []).map((c) => deepest.get(c)!))));
  root.eachBefore((n) => {
    if (n.parent === null) {
      (n as { value?: number }).value = deepest.get(n)!;
      return;
    }
    const siblings = n.parent.children!.reduce((sum, c) => sum + deepest.get(c)!, 0);
    (n as { value?: number }).value = siblings > 0 ? (n.parent.value! * deepest.get(n)!) / siblings : 0;
  });
  return (d) => deepest.get(d) ?? 0;
}

/** Each frame's value and its callees', added up (d3's sum, which the layout reads). Returns a node's total. */
function summed(root: HierarchyNode<FlameNode>, metric: number): (d: HierarchyNode<FlameNode>) => number {
  root.sum((n) => n.values[metric]!);
  return (d) => d.value ?? 0;
}

/** The frames from the outermost down the callee with the deepest stack at each step (the first of equals). */
function deepestPath(root: HierarchyNode<FlameNode>, deepest: (d: HierarchyNode<FlameNode>) => number): Set<HierarchyNode<FlameNode>> {
  const path = new Set<HierarchyNode<FlameNode>>();
  for (let n = root; n.children !== undefined && n.children.length > 0; ) {
    n = n.children.reduce((best, c) => (deepest(c) > deepest(best) ? c : best));
    path.add(n);
  }
  return path;
}

/** What width means under the stack metric, said in the panel. */
function stackWidthNote(peak: number): string {
  return (
    "Width: the deepest stack reached while a frame was on the call stack (bytes from the thread's stack base: the most of its own entry and its callees', never a sum); " +
    `callees share their caller's width in proportion to theirs. Outlined: the deepest path, ${formatBytesFine(peak)} (the run's peak stack).`
  );
}

function pathOf(d: Rect): string[] {
  return d.ancestors().reverse().slice(1).map((a) => a.data.name);
}

function isAncestor(a: Rect, of: Rect): boolean {
  for (let p = of.parent; p !== null; p = p.parent) if (p === a) return true;
  return false;
}
