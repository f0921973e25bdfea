// Temporaries: blocks a FREE ends within N events of their allocation, per site; `report --temporary [N]`.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { temporaries } from '../../analysis/temporaries.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { runReport } from '../../cli/report.js';
import { capture } from '../fixtures/cli-capture.js';
import { basicTrace } from '../fixtures/scenarios.js';

describe('temporaries', () => {
  test('within N events, FREE only (realloc-ended blocks are not temporaries)', () => {
    const model = decodeTrace(basicTrace().build());
    // a: ALLOC at event 5, FREE at 16 (11 events later); c and e are ended by REALLOCs.
    const t = temporaries(model);
    expect(t).toMatchObject({ within: 16, blocks: 1, bytes: 24, allocations: 6 });
    expect(t.sites.map((s) => [s.key, s.label, s.allocs, s.temporaries, s.bytes, s.share])).toEqual([
      ['site:4', 'demo.c:4 make_node → malloc', 2, 1, 24, 0.5],
    ]);
    expect(temporaries(model, { within: 11 }).blocks).toBe(1);
    expect(temporaries(model, { within: 10 })).toMatchObject({ blocks: 0, bytes: 0, sites: [] });
    expect(() => temporaries(model, { within: -1 })).toThrow(RangeError);
  });

  test('report --temporary [N]: text and JSON', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'mw-temp-')), 't.mwtrace');
    writeFileSync(file, basicTrace().build());
    const text = await capture(runReport, [file, '--temporary']);
    expect(text.code).toBe(0);
    expect(text.out).toContain('Temporaries: blocks freed within 16 events of their allocation (1 of 1 site)');
    expect(text.out).toMatch(/1\s+24 B\s+50\.0%\s+demo\.c:4 make_node → malloc/);
    for (const line of text.out.split('\n')) expect(line.length).toBeLessThanOrEqual(80);
    const j = JSON.parse((await capture(runReport, [file, '--temporary', '4', '--json'])).out);
    expect(j.temporaries).toEqual({ within: 4, blocks: 0, bytes: 0, allocations: 6, siteCount: 0, sites: [] });
    // --temporary before the trace file, and as --temporary=N.
    expect(JSON.parse((await capture(runReport, ['--temporary', file, '--json'])).out).temporaries.within).toBe(16);
    expect(JSON.parse((await capture(runReport, [file, '--temporary=11', '--json'])).out).temporaries.blocks).toBe(1);
    const bad = await capture(runReport, [file, '--temporary=x']);
    expect(bad.code).toBe(2);
  });
});
