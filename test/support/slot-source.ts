// A decoded model folded as a streaming reader folds a trace: block handles are slots, each holding a live block and
// handed to the next block created once every fold has seen the event that ended it (the latest freed slot first, so
// slots are reused as soon as they can be, and scribbled over meanwhile). A fold that keeps a handle past its block's
// end reads another block here.
import type { EventFold, FoldBlocks, FoldEvent, FoldSource, FoldTables, TraceEnd, TraceStart } from '../../analysis/event-fold.js';
import { emptyEvent, foldModel, modelEnd, modelStart } from '../../analysis/model-fold.js';
import { NONE, type Model } from '../../analysis/model.js';

const COLUMNS = ['row', 'id', 'allocEvent', 'requested', 'usable', 'address', 'site', 'fn', 'thread', 'interposed', 'library', 'entry', 'leakClass'] as const;

/** Tells `folds` each event of the model's with its block rows turned into slots. */
class SlotFolds implements EventFold {
  private readonly slots: Record<string, number[]> = Object.fromEntries(COLUMNS.map((c) => [c, []]));
  private readonly slotOf: number[] = [];
  private readonly free: number[] = [];
  private used = 0;
  private readonly e: FoldEvent = emptyEvent();

  constructor(private readonly folds: EventFold[]) {}

  private tables(rows: FoldTables): FoldTables {
    return { ...rows, blocks: this.slots as unknown as FoldBlocks };
  }

  event(row: FoldEvent, rows: FoldTables): void {
    const e = Object.assign(this.e, row);
    if (row.newBlock !== NONE) {
      e.newBlock = this.free.length > 0 ? this.free.pop()! : this.used++;
      for (const c of COLUMNS) this.slots[c]![e.newBlock] = rows.blocks[c][row.newBlock]!;
      this.slotOf[row.newBlock] = e.newBlock;
    }
    if (row.oldBlock !== NONE) e.oldBlock = this.slotOf[row.oldBlock]!;
    if (row.linked !== null) e.linked = row.linked.map((r) => this.slotOf[r]!);
    const tables = this.tables(rows);
    for (const f of this.folds) f.event(e, tables);
    if (e.oldBlock !== NONE) {
      for (const c of COLUMNS) this.slots[c]![e.oldBlock] = -7;
      this.free.push(e.oldBlock);
    }
  }

  branch(thread: number, site: number, taken: number): void {
    for (const f of this.folds) f.branch?.(thread, site, taken);
  }

  finish(end: TraceEnd, rows: FoldTables): void {
    const slotEnd = { ...end, liveBlocks: end.liveBlocks.map((r) => this.slotOf[r]!) };
    for (const f of this.folds) f.finish?.(slotEnd, this.tables(rows));
  }
}

export function slotSource(model: Model): FoldSource {
  return {
    run(build: (start: TraceStart) => EventFold[]) {
      foldModel(model, [new SlotFolds(build(modelStart(model)))]);
      return modelEnd(model);
    },
  };
}
