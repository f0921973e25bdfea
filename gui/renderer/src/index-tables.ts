// Index mode's panels' tables: what the host computed as it streamed the trace (analysis/panel-data.ts, served as
// `/api/index/panels`), read through the same interface as the decoded model's (tables.ts `PanelTables`), with each
// table row's first event, which a row click jumps to.
import type { AttributionRow } from '../../../analysis/attribution.js';
import type { LeakCauses } from '../../../analysis/leak-causes.js';
import type { LeaksAtExit } from '../../../analysis/leaks.js';
import type { LinkedFree } from '../../../analysis/linked.js';
import type { Model } from '../../../analysis/model.js';
import { indexPanelsOf, type BlockCounts, type IndexPanels, type PanelBy } from '../../../analysis/panel-data.js';
import type { Peaks } from '../../../analysis/peak.js';
import type { StackReport } from '../../../analysis/stack-report.js';
import type { AttributionWithBlocks, PanelTables } from './tables.js';
import type { PanelView } from './view-data.js';
import { NO_EVENTS_OF, type IndexApi } from './backend.js';

export class IndexTables implements PanelTables {
  private readonly tables = new Map<PanelBy, AttributionWithBlocks & { firstEvent: Map<AttributionRow, number> }>();

  private readonly data: IndexPanels;

  /**
   * `data`: as the host's JSON has it (indexPanelsText); `eventsOf`: the index's listing of a call path's allocations;
   * `timing`: how long the page's own worker took (a trace it holds whole), absent for a host's.
   */
  constructor(
    readonly run: Pick<Model, 'sites' | 'program'>,
    data: IndexPanels,
    private readonly eventsOf: IndexApi['eventsOf'] = async () => NO_EVENTS_OF,
    private readonly timing?: { decodeMs: number; tablesMs: number },
  ) {
    this.data = indexPanelsOf(data);
  }

  attribution(by: PanelBy): AttributionWithBlocks & { firstEvent: Map<AttributionRow, number> } {
    let t = this.tables.get(by);
    if (t === undefined) {
      const a = this.data.tables.attribution[by];
      t = {
        by: a.by,
        mode: a.mode,
        rows: a.rows,
        total: a.total,
        blocks: new Map(a.rows.map((r, i) => [r.key, { allocations: a.blocks[i]![0], frees: a.blocks[i]![1] }])),
        firstEvent: new Map(a.rows.map((r, i) => [r, a.firstEvent[i]!])),
      };
      this.tables.set(by, t);
    }
    return t;
  }

  /** The first heap event charged to a row of an attribution table, or null. */
  firstEventOf(by: PanelBy, row: AttributionRow): number | null {
    const e = this.attribution(by).firstEvent.get(row);
    return e === undefined || e < 0 ? null : e;
  }

  blockCounts(): BlockCounts {
    return this.data.tables.blockCounts;
  }

  peaks(): Peaks {
    return this.data.tables.peaks;
  }

  leaks(): LeaksAtExit {
    return this.data.tables.leaks;
  }

  leakAllocEvent(block: number): number | null {
    const e = this.data.tables.leakAllocEvents[block];
    return e === undefined || e < 0 ? null : e;
  }

  linked(): { frees: LinkedFree[]; count: number } {
    return this.data.tables.linked;
  }

  leakCauses(): LeakCauses {
    return this.data.tables.leakCauses;
  }

  stack(): StackReport {
    return this.data.tables.stack;
  }

  /** The allocations of a call path, as the index lists them (a host's does not: why, and its source is shown). */
  callPathAllocations(path: string[]): Promise<Int32Array | string> {
    return this.eventsOf({ callPath: path }).then((r) => (typeof r === 'string' ? `listing the allocations of a call path needs the whole trace decoded, which the viewer does not do for a trace opened through its index: its source is shown` : r));
  }

  /** What the panels read beside the tables, as a decoded trace's view gives it. */
  view(): PanelView {
    const t = this.data.tables;
    const extras = { summary: t.summary, budgets: t.budgets, flame: this.data.extras.flame, consumed: this.data.extras.consumed };
    return this.timing !== undefined ? { ...extras, ...this.timing } : { ...extras, decodeMs: 0, tablesMs: 0, hostSeconds: this.data.seconds };
  }
}
