// Counts a trace's records and events in one pass without building the model,
// for traces too large to decode into memory (benchmarks measure bytes/event
// on hundreds of millions of events).
import { ProblemLog } from '../problems.js';
import { Kind } from './format.js';
import { parseHeader } from './header.js';
import { walkRecords } from './records.js';

/** Record kinds that are not events of the model (see analysis/README.md). */
const NOT_EVENTS = new Set<number>([Kind.UNIT, Kind.LINKED, Kind.TIME, Kind.PROGRAM]);

export interface TraceCounts {
  records: number;
  events: number;
  /** Events per record kind. */
  byKind: Map<number, number>;
}

export function countEvents(bytes: Uint8Array): TraceCounts {
  const byKind = new Map<number, number>();
  let records = 0;
  walkRecords(bytes, parseHeader(bytes), {
    record(r) {
      records++;
      if (!NOT_EVENTS.has(r.kind)) byKind.set(r.kind, (byKind.get(r.kind) ?? 0) + 1);
    },
  }, new ProblemLog());
  let events = 0;
  for (const n of byKind.values()) events += n;
  return { records, events, byKind };
}
