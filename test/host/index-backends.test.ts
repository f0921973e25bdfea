// The two implementations of the page's one interface to a trace answer alike: the host's index file of a large
// trace (host/index-file.ts, streamed from the file) and the page's own index of a trace it holds whole
// (analysis/memory-index.ts over the decoded model, what gui/renderer/src/index-worker.ts builds). Same meta, same
// summaries, the same bytes for a range of events and for the fine rows, the same detail, call stack and next event.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventClassBit, EVENT_CLASSES } from '../../analysis/event-detail.js';
import { encodeFine, encodeRange } from '../../analysis/event-index.js';
import { buildMemoryIndex } from '../../analysis/memory-index.js';
import { modelSource } from '../../analysis/model-fold.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { buildIndexFile, TraceIndex } from '../../host/index-file.js';
import { foldTraces } from '../support/fold-traces.js';
import { scratch } from '../support/programs.js';

const dir = scratch('index-backends');

describe("the host's index and the page's own answer alike", () => {
  for (const [name, bytes] of foldTraces().filter(([n]) => !n.startsWith('invalid/'))) {
    it(name, () => {
      const trace = path.join(dir, `${name.replace(/\W/g, '_')}.mwtrace`);
      writeFileSync(trace, bytes);
      const host = TraceIndex.read(buildIndexFile(trace, `${trace}.index`), trace).reader;
      const page = buildMemoryIndex(modelSource(decodeTrace(bytes))).reader;
      const n = host.events;
      expect(page.events).toBe(n);
      expect(page.meta).toEqual(host.meta);
      expect(Array.from(page.summary)).toEqual(Array.from(host.summary));
      expect(encodeRange(page.range(0, n, 1 << 20))).toEqual(encodeRange(host.range(0, n, 1 << 20)));
      if (n > 2) expect(encodeRange(page.range(1, n - 1, 1 << 20))).toEqual(encodeRange(host.range(1, n - 1, 1 << 20)));
      expect(encodeFine(page.fine(0, n, 1 << 18))).toEqual(encodeFine(host.fine(0, n, 1 << 18)));
      for (let e = 0; e < n; e++) {
        expect(page.detail(e), `event ${e}`).toEqual(host.detail(e));
        expect(page.callStack(e), `stack at ${e}`).toEqual(host.callStack(e));
      }
      for (const cls of EVENT_CLASSES) {
        for (const [from, direction] of [[-1, 1], [n, -1], [n >> 1, 1], [n >> 1, -1]] as const) {
          expect(page.nextOfClass(from, direction, eventClassBit(cls), null), `${cls} from ${from}`).toBe(host.nextOfClass(from, direction, eventClassBit(cls), null));
        }
      }
    });
  }
});
