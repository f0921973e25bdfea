// The timeline as CSV: one row per interval (or per event), for spreadsheets and plotting tools.
import type { Model } from './model.js';
import { eventSeries, intervalSeries, type IntervalSpec } from './timeline.js';

export const CSV_HEADER = 'event,time_ns,heap_requested,heap_usable,stack,static';

/**
 * One header line, then one row per interval of `spec` (default: one per event): the interval's last event (for an
 * empty time interval, the last event before it; -1 if none), the interval's end in ns (events: the time of its last
 * event; time: its end boundary), and heap requested, heap usable, stack (all threads) and static bytes after that
 * event. Lines end with "\n". Throws IntervalError for a bad spec (see `intervalSeries`).
 */
export function exportCsv(model: Model, spec: IntervalSpec = { every: 1, unit: 'events' }): string {
  const s = intervalSeries(model, spec, eventSeries(model));
  const lines: string[] = [CSV_HEADER];
  // Built in pieces so a run of millions of events does not make one huge rope of tiny strings.
  const pieces: string[] = [];
  for (let k = 0; k < s.count; k++) {
    lines.push(
      `${s.endEvent[k]},${Math.round(s.endTime[k]!)},${s.heapRequested[k]},${s.heapUsable[k]},${s.stack[k]},${s.static[k]}`,
    );
    if (lines.length >= 65536) {
      pieces.push(lines.join('\n'));
      lines.length = 0;
    }
  }
  if (lines.length > 0) pieces.push(lines.join('\n'));
  return pieces.join('\n') + '\n';
}
