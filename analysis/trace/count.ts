// Counts a trace's records and events in one pass without building the model,
// for traces too large to decode into memory (benchmarks measure bytes/event
// on hundreds of millions of events). Events are those the resolver hands out (isEventKind, not ignored).
import { ProblemLog } from '../problems.js';
import { isEventKind } from './format.js';
import { parseHeader } from './header.js';
import { walkRecords } from './records.js';

export interface TraceCounts {
  records: number;
  events: number;
  /** Records per record kind, events or not. */
  byKind: Map<number, number>;
}

export function countEvents(bytes: Uint8Array): TraceCounts {
  const byKind = new Map<number, number>();
  let records = 0;
  let events = 0;
  walkRecords(bytes, parseHeader(bytes), {
    record(r) {
      records++;
      if (!r.ignored && isEventKind(r.kind)) events++;
      byKind.set(r.kind, (byKind.get(r.kind) ?? 0) + 1);
    },
  }, new ProblemLog());
  return { records, events, byKind };
}
