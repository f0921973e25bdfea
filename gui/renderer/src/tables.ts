// The analysis tables behind the panels, as both modes give them (`PanelTables`): in whole mode computed from the decoded model on first use and kept (`Tables`: a panel costs one pass over the model when it is first opened, about 0.1 s for five million events, not before the first chart); in index mode read from what the host computed as it streamed the trace (index-tables.ts).
import { attribution, type Attribution, type AttributionBy } from '../../../analysis/attribution.js';
import { Kind } from '../../../analysis/trace/format.js';
import { NONE } from '../../../analysis/model.js';
import { leaksAtExit, type LeaksAtExit } from '../../../analysis/leaks.js';
import { linkedFrees, type LinkedFree } from '../../../analysis/linked.js';
import type { Model } from '../../../analysis/model.js';
import { peaks, type Peaks } from '../../../analysis/peak.js';
import { leakCauses, type LeakCauses } from '../../../analysis/leak-causes.js';
import { stackReport, type StackReport } from '../../../analysis/stack-report.js';
import { PANEL_ROWS, type BlockCounts, type PanelBy } from '../../../analysis/panel-data.js';
import { allocationsOfCallPath } from '../../../analysis/event-sets.js';
import type { StackInfo } from '../../../host/session-types.js';

export type { BlockCounts };

/** An attribution table (maybe its first TABLE_ROWS rows) and, by row key, the blocks its events made and ended. */
export interface AttributionWithBlocks extends Attribution {
  blocks: Map<string, { allocations: number; frees: number }>;
  /** Groups in all (more than `rows` holds when the host cut the table). */
  total: number;
}

/** Rows shown per table; beyond, the panel says how many there are. */
export const TABLE_ROWS = PANEL_ROWS;

/** What the panels read, in either mode. */
export interface PanelTables {
  /** The run's site table and program (names, the directory paths are shown relative to). */
  readonly run: Pick<Model, 'sites' | 'program'>;
  attribution(by: PanelBy): AttributionWithBlocks;
  blockCounts(): BlockCounts;
  peaks(): Peaks;
  /** The blocks listed may be the first TABLE_ROWS (index mode); the classes' counts are whole. */
  leaks(): LeaksAtExit;
  /** The allocation event of a block `leaks()` lists, by its row. */
  leakAllocEvent(block: number): number | null;
  /** The frees with a linked set (maybe the first TABLE_ROWS), and how many there are. */
  linked(): { frees: LinkedFree[]; count: number };
  leakCauses(): LeakCauses;
  stack(): StackReport;
  /** The allocations made on a call path and below it, or why they cannot be listed (now, or once asked of the trace's index). */
  callPathAllocations(path: string[]): Int32Array | string | Promise<Int32Array | string>;
}

export class Tables implements PanelTables {
  private readonly memo = new Map<string, unknown>();

  /** `stack`: the frame sizes the host read from the traced program; null when the trace came without a host. */
  constructor(
    readonly model: Model,
    private readonly stackInfo: StackInfo | null = null,
  ) {}

  get run(): Model {
    return this.model;
  }

  private once<T>(key: string, make: () => T): T {
    if (!this.memo.has(key)) this.memo.set(key, make());
    return this.memo.get(key) as T;
  }

  attribution(by: AttributionBy): AttributionWithBlocks {
    return this.once(`by:${by}`, () => {
      const { newBlock, oldBlock } = this.model.events;
      const blocks = new Map<string, { allocations: number; frees: number }>();
      const a = attribution(this.model, { by }, (e, key) => {
        let n = blocks.get(key);
        if (n === undefined) blocks.set(key, (n = { allocations: 0, frees: 0 }));
        if (newBlock[e] !== NONE) n.allocations++;
        if (oldBlock[e] !== NONE) n.frees++;
      });
      return { ...a, blocks, total: a.rows.length };
    });
  }

  /** The run's blocks made and ended, and those a realloc made or ended: one pass over the blocks. */
  blockCounts(): BlockCounts {
    return this.once('blocks', () => {
      const { blocks, events } = this.model;
      const out: BlockCounts = { allocations: blocks.count, frees: 0, byRealloc: { allocations: 0, frees: 0 } };
      for (let b = 0; b < blocks.count; b++) {
        if (events.kind[blocks.allocEvent[b]!] === Kind.REALLOC) out.byRealloc.allocations++;
        const f = blocks.freeEvent[b]!;
        if (f === NONE) continue;
        out.frees++;
        if (events.kind[f] === Kind.REALLOC) out.byRealloc.frees++;
      }
      return out;
    });
  }

  peaks(): Peaks {
    return this.once('peaks', () => peaks(this.model));
  }

  leaks(): LeaksAtExit {
    return this.once('leaks', () => leaksAtExit(this.model));
  }

  linked(): { frees: LinkedFree[]; count: number } {
    return this.once('linked', () => {
      const frees = linkedFrees(this.model);
      return { frees, count: frees.length };
    });
  }

  leakAllocEvent(block: number): number | null {
    return block >= 0 && block < this.model.blocks.count ? this.model.blocks.allocEvent[block]! : null;
  }

  callPathAllocations(path: string[]): Int32Array {
    return allocationsOfCallPath(this.model, path);
  }

  leakCauses(): LeakCauses {
    return this.once('causes', () => leakCauses(this.model));
  }

  /** The worst case from the frame sizes beside the deepest stack of the run, as `report --stack` computes them. */
  stack(): StackReport {
    const info = this.stackInfo ?? { program: null, units: null, missing: 'this trace was opened without its program (open it with cc-memwrap view)' };
    return this.once('stack', () => stackReport(this.model, info.program, info.units, info.missing));
  }
}
