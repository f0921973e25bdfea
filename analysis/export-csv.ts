// The timeline as CSV: one row per interval (or per event), for spreadsheets and plotting tools.
import type { EventFold, FoldEvent, TraceStart } from './event-fold.js';
import { foldModel, modelStart } from './model-fold.js';
import type { Model } from './model.js';
import { IntervalFold, type IntervalSpec } from './timeline.js';

export const CSV_HEADER = 'event,time_ns,heap_requested,heap_usable,stack,static';

/**
 * One header line, then one row per interval of `spec` (default: one per event): the interval's last event (for an
 * empty time interval, the last event before it; -1 if none), the interval's end in ns (events: the time of its last
 * event; time: its end boundary), and heap requested, heap usable, stack (all threads) and static bytes after that
 * event. Lines end with "\n". A fold: each interval's line is made when it completes (`IntervalFold` with a sink), so
 * only the text is kept. The constructor throws IntervalError for a bad spec, `result` for too many intervals (see
 * `IntervalFold`).
 */
export class CsvFold implements EventFold {
  /** The intervals' end times. */
  readonly needsTime = true;
  private readonly intervals: IntervalFold;
  private readonly lines: string[] = [CSV_HEADER];
  // Built in pieces so a run of millions of events does not make one huge rope of tiny strings.
  private readonly pieces: string[] = [];

  constructor(start: TraceStart, spec: IntervalSpec = { every: 1, unit: 'events' }) {
    this.intervals = new IntervalFold(start, spec, (s) => {
      this.lines.push(`${s.endEvent},${Math.round(s.endTime)},${s.heapRequested},${s.heapUsable},${s.stack},${s.static}`);
      if (this.lines.length >= 65536) {
        this.pieces.push(this.lines.join('\n'));
        this.lines.length = 0;
      }
    });
  }

  event(e: FoldEvent): void {
    this.intervals.event(e);
  }

  finish(): void {
    this.intervals.finish();
  }

  /** The CSV text. */
  result(): string {
    this.intervals.result();
    const pieces = this.lines.length > 0 ? [...this.pieces, this.lines.join('\n')] : this.pieces;
    return pieces.join('\n') + '\n';
  }
}

/** `CsvFold` over a decoded model. */
export function exportCsv(model: Model, spec: IntervalSpec = { every: 1, unit: 'events' }): string {
  const fold = new CsvFold(modelStart(model), spec);
  foldModel(model, [fold]);
  return fold.result();
}
