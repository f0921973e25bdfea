// A decoded model folded as a streaming reader folds a trace: block handles are slots, each holding a live block and
// handed to the next block created once every fold has seen the event that ended it (the latest freed slot first, so
// slots are reused as soon as they can be). A fold that keeps a handle past its block's end reads another block here.
import type { EventFold, FoldBlocks, FoldSource, FoldTables, TraceStart } from '../../analysis/event-fold.js';
import { emptyEvent, modelEnd, modelStart, modelTables } from '../../analysis/model-fold.js';
import { NONE, type Model } from '../../analysis/model.js';
import { Flag, Kind } from '../../analysis/trace/format.js';

const COLUMNS = ['row', 'id', 'allocEvent', 'requested', 'usable', 'address', 'site', 'fn', 'thread', 'interposed', 'library', 'entry', 'leakClass'] as const;

export function slotSource(model: Model): FoldSource {
  return {
    run(build: (start: TraceStart) => EventFold[]) {
      const folds = build(modelStart(model));
      const rows = modelTables(model);
      const slots: Record<string, number[]> = Object.fromEntries(COLUMNS.map((c) => [c, []]));
      const tables: FoldTables = { blocks: slots as unknown as FoldBlocks, frames: rows.frames, timeOf: rows.timeOf };
      const slotOf = new Int32Array(model.blocks.count).fill(NONE);
      const free: number[] = [];
      let used = 0;
      const untracked = new Map<number, number>();
      for (let k = 0; k < model.untrackedFrees.count; k++) untracked.set(model.untrackedFrees.event[k]!, model.untrackedFrees.address[k]!);
      const statics = new Map<number, number>();
      for (let s = 0; s < model.statics.count; s++) statics.set(model.statics.event[s]!, model.statics.address[s]!);
      const E = model.events;
      const L = model.linked;
      let nextLinked = 0;
      const e = emptyEvent();
      for (let i = 0; i < E.count; i++) {
        const kind = E.kind[i]!;
        let created = NONE;
        if (E.newBlock[i] !== NONE) {
          const r = E.newBlock[i]!;
          created = free.length > 0 ? free.pop()! : used++;
          for (const c of COLUMNS) slots[c]![created] = rows.blocks[c][r]!;
          slotOf[r] = created;
        }
        const ended = E.oldBlock[i] === NONE ? NONE : slotOf[E.oldBlock[i]!]!;
        Object.assign(e, {
          index: i,
          kind,
          flags: E.flags[i]!,
          thread: E.thread[i]!,
          site: E.site[i]!,
          time: E.time[i]!,
          value: E.value[i]!,
          newBlock: created,
          oldBlock: ended,
          frame: E.frame[i]!,
          stack: E.stack[i]!,
          stackTotal: E.stackTotal[i]!,
          heapRequested: E.heapRequested[i]!,
          heapUsable: E.heapUsable[i]!,
          library: E.library[i]!,
          untrackedAddress: kind === Kind.FREE && (E.flags[i]! & Flag.FREE_UNTRACKED) !== 0 ? (untracked.get(i) ?? 0) : 0,
          staticAddress: kind === Kind.STATIC ? (statics.get(i) ?? 0) : 0,
          linked: null,
          linkedPartial: false,
        });
        if (nextLinked < L.count && L.event[nextLinked] === i) {
          e.linked = Array.from(L.blocks.subarray(L.start[nextLinked]!, L.start[nextLinked + 1]!), (r) => slotOf[r]!);
          e.linkedPartial = L.partial[nextLinked] === 1;
          nextLinked++;
        }
        for (const f of folds) f.event(e, tables);
        if (ended !== NONE) {
          // Scribbled over, as a reused slot would be.
          for (const c of COLUMNS) slots[c]![ended] = -7;
          free.push(ended);
        }
      }
      const end = { ...modelEnd(model) };
      end.liveBlocks = end.liveBlocks.map((r) => slotOf[r]!);
      for (const f of folds) f.finish?.(end, tables);
      return end;
    },
  };
}
