// The chart's legend as data: the page's legend bar and the exports draw the same keys from this list.
import type { EventClass } from '../../../../analysis/event-detail.js';
import { CLASS_COLOURS, CLASS_LABELS, MARK_COLOURS, SERIES_COLOURS } from './palette.js';

export interface LegendKey {
  colour: string;
  label: string;
  /** box: a filled square; line: a mark or budget line; rug: the rows of event kinds under the plot. */
  shape: 'box' | 'line' | 'rug';
  /** Drawn on the page only (the overview strip is not exported). */
  screenOnly?: boolean;
}

export const LEGEND_KEYS: readonly LegendKey[] = [
  ...(['alloc', 'free', 'call', 'return'] as EventClass[]).map((c): LegendKey => ({ colour: CLASS_COLOURS[c], label: CLASS_LABELS[c], shape: 'box' })),
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
