// The chart's legend as data, and as the page's legend bar: the page and the exports draw the same keys from this
// list. The bar is folded to the kinds of event (one row) in projector mode, where room is short, and a button
// unfolds it (every key, and what the words mean).
import type { EventClass } from '../../../../analysis/event-detail.js';
import { el, fill } from '../dom.js';
import { CLASS_COLOURS, CLASS_LABELS, MARK_COLOURS, SERIES_COLOURS } from './palette.js';

export interface LegendKey {
  colour: string;
  label: string;
  /** box: a filled square; line: a mark or budget line; rug: the rows of event kinds under the plot. */
  shape: 'box' | 'line' | 'rug';
  /** Drawn on the page only (the overview strip is not exported). */
  screenOnly?: boolean;
  /** Kept when the bar is folded: the colours of the bars themselves. */
  core?: boolean;
}

export const LEGEND_KEYS: readonly LegendKey[] = [
  ...(['alloc', 'free', 'call', 'return', 'other'] as EventClass[]).map((c): LegendKey => ({ colour: CLASS_COLOURS[c], label: CLASS_LABELS[c], shape: 'box', core: true })),
  { colour: SERIES_COLOURS.stack, label: 'stack (summarised)', shape: 'box' },
  { colour: SERIES_COLOURS.static, label: 'static', shape: 'box' },
  { colour: SERIES_COLOURS.heap, label: 'heap (summarised)', shape: 'box' },
  // Zoomed out, a column stands for many events: its light part reaches the largest value among them, its dark part
  // the smallest, and thin rows under the plot are coloured by the kinds of event it holds. The strip under the x axis
  // is the whole run, where a range can be brushed.
  { colour: SERIES_COLOURS.heapMin, label: 'darker: the smallest in a column', shape: 'box' },
  { colour: CLASS_COLOURS.alloc, label: 'rows under the plot: the kinds of event in a column', shape: 'rug' },
  { colour: SERIES_COLOURS.stack, label: 'strip under the axis: the whole run (drag to zoom)', shape: 'box', screenOnly: true },
  { colour: MARK_COLOURS.selected, label: 'selected', shape: 'line' },
  { colour: MARK_COLOURS.related, label: 'its other end / linked', shape: 'line' },
  { colour: MARK_COLOURS.orphaned, label: 'orphaned by the free', shape: 'line' },
  { colour: MARK_COLOURS.highlight, label: 'highlighted', shape: 'box' },
  { colour: MARK_COLOURS.budget, label: 'budget', shape: 'line' },
  { colour: MARK_COLOURS.exceeded, label: 'budget exceeded', shape: 'box' },
];

/** Per legend bar: whether a person folded or unfolded it (then zooming leaves it so), or null. */
const chosen = new WeakMap<HTMLElement, boolean>();

/** Fills `host` with the toggle, every key and the notes (what the words mean). */
export function renderLegend(host: HTMLElement, notes: readonly string[]): void {
  const swatch = (k: LegendKey): HTMLElement => {
    const s = el('span', { class: k.shape === 'box' ? 'swatch' : `swatch ${k.shape}` });
    s.style.background = k.colour;
    return el('span', { class: k.core ? 'key core' : 'key' }, s, k.label);
  };
  const toggle = el('button', { type: 'button', class: 'link legend-toggle', 'data-role': 'legend-toggle' });
  toggle.addEventListener('click', () => {
    const compact = !host.classList.contains('compact');
    chosen.set(host, compact);
    setCompact(host, compact);
  });
  fill(host, toggle, ...LEGEND_KEYS.map(swatch), ...notes.map((n) => el('span', { class: 'note' }, n)));
  setCompact(host, host.classList.contains('compact'));
}

/** Folds the legend in projector mode and unfolds it otherwise, unless a person chose. */
export function fitLegend(host: HTMLElement, projector: boolean): void {
  setCompact(host, chosen.get(host) ?? projector);
}

function setCompact(host: HTMLElement, compact: boolean): void {
  host.classList.toggle('compact', compact);
  const toggle = host.querySelector<HTMLButtonElement>('[data-role=legend-toggle]');
  if (toggle === null) return;
  toggle.textContent = compact ? 'legend ▸' : 'legend ▾';
  toggle.title = compact ? 'Show every key of the chart and what its words mean' : 'Fold the legend to the kinds of event';
  toggle.setAttribute('aria-expanded', String(!compact));
}
