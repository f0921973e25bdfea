// The analysis tables behind the panels, computed on first use and kept: a panel costs one pass over the model when it is first opened (about 0.1 s for five million events), not before the first chart.
import { attribution, type Attribution, type AttributionBy } from '../../../analysis/attribution.js';
import { leaksAtExit, type LeaksAtExit } from '../../../analysis/leaks.js';
import { linkedFrees, type LinkedFree } from '../../../analysis/linked.js';
import type { Model } from '../../../analysis/model.js';
import { peaks, type Peaks } from '../../../analysis/peak.js';

/** Rows shown per table; beyond, the panel says how many there are. */
export const TABLE_ROWS = 500;

export class Tables {
  private readonly memo = new Map<string, unknown>();

  constructor(readonly model: Model) {}

  private once<T>(key: string, make: () => T): T {
    if (!this.memo.has(key)) this.memo.set(key, make());
    return this.memo.get(key) as T;
  }

  attribution(by: AttributionBy): Attribution {
    return this.once(`by:${by}`, () => attribution(this.model, { by }));
  }

  peaks(): Peaks {
    return this.once('peaks', () => peaks(this.model));
  }

  leaks(): LeaksAtExit {
    return this.once('leaks', () => leaksAtExit(this.model));
  }

  linked(): LinkedFree[] {
    return this.once('linked', () => linkedFrees(this.model));
  }
}
