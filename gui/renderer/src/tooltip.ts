// The chart's hover tooltip: the event under the pointer (kind and number, place, size, memory in use after it, time), drawn beside the pointer inside the chart area.
import type { EventDetail } from '../../../analysis/event-detail.js';
import { formatBytesFine } from '../../../analysis/units.js';
import { formatNs } from './chart/chart.js';
import { el, fill } from './dom.js';

/** Where the pointer is, in client coordinates, and how many events share its pixel column. */
export interface HoverPoint {
  clientX: number;
  clientY: number;
  columnEvents: number;
}

/** Fills `tip` with event `d` and shows it below and right of the pointer, kept inside `area` horizontally. */
export function showTooltip(tip: HTMLElement, area: HTMLElement, d: EventDetail, at: HoverPoint): void {
  fill(
    tip,
    el('strong', {}, `${d.kind} · event ${d.event}`),
    el('div', {}, d.place?.label ?? 'no source location'),
    d.madeBy ? el('div', {}, d.madeBy.label) : null,
    d.bytes !== null ? el('div', {}, `${d.class === 'call' ? 'stack at entry' : 'size'} ${formatBytesFine(d.bytes)}`) : null,
    el('div', {}, `heap ${formatBytesFine(d.heapRequested)} · stack ${formatBytesFine(d.stack)} · static ${formatBytesFine(d.static)}`),
    el('div', { class: 'muted' }, `${formatNs(d.timeNs)}${at.columnEvents > 1 ? ` · fullest of ${at.columnEvents.toLocaleString('en-US')} events in this column` : ''}`),
  );
  tip.hidden = false;
  const box = area.getBoundingClientRect();
  tip.style.left = `${Math.min(at.clientX - box.left + 14, box.width - 300)}px`;
  tip.style.top = `${at.clientY - box.top + 14}px`;
}

export function hideTooltip(tip: HTMLElement): void {
  tip.hidden = true;
}
