// The viewer's index in two stages (host/index-cache.ts openTraceIndexStaged): the summaries file first — what the
// chart and the overview draw, the same as the whole index's — served while the events are indexed; requests that
// need the events refused in words ("events: building N%", the server's 503) until they are built, then answered; the
// summaries file removed once the index stands; a build stopped in the second stage leaves no index and a whole
// summaries file that the next build starts from; a stale or damaged one is built again. The panels' data (which reads
// the trace, not the index) is computed and served once the summaries are ready, while the events are built.
import { existsSync, readdirSync, rmSync, statSync, truncateSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { callStackAt, eventDetail } from '../../analysis/event-detail.js';
import { decodeFine, S, SUMMARY_FIELDS, THREAD_FIELDS } from '../../analysis/event-index.js';
import { staticSeries } from '../../analysis/timeline.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { buildSummaryFile, cacheDirFor, cacheFiles, openTraceIndexStaged, prepareCache, TraceIndex, type BuildProgress } from '../../host/index-cache.js';
import { startServer } from '../../host/server.js';
import { TraceSession, type SessionOptions } from '../../host/trace-session.js';
import { RecentList } from '../../host/recent.js';
import { interruptViewAt } from '../support/interrupt-view.js';
import { bigTrace } from '../support/big-trace.js';
import { scratch } from '../support/programs.js';
import { apiGet } from '../support/viewer-api.js';
import { basicTrace } from '../fixtures/scenarios.js';
import { panelTables, type IndexPanels } from '../../analysis/panel-data.js';
import { FileSource } from '../../analysis/trace/file-source.js';
import { streamSource } from '../../analysis/trace/resolve-stream.js';

const dir = scratch('index-stages');

function write(name: string, bytes: Uint8Array): string {
  const p = path.join(dir, name);
  writeFileSync(p, bytes);
  return p;
}

/** A new trace of `events` events written as `name`, and a session whose index holds its second stage (the events) until `release`. */
async function heldSession(name: string, events: number, options: SessionOptions = {}): Promise<{ bytes: Uint8Array; trace: string; file: string; summaries: string; release: () => void; session: TraceSession }> {
  const bytes = bigTrace(events);
  const trace = write(name, bytes);
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const session = await TraceSession.open(trace, { ...options, index: true, beforeIndexEvents: () => gate });
  const files = cacheFiles(cacheDirFor(trace));
  return { bytes, trace, file: files.index, summaries: files.summaries, release, session };
}

/** The fields of the summary table the chart draws (not the byte offsets and times only the whole index has). */
const CHART_FIELDS = [S.ABOVE_MIN, S.ABOVE_MAX, S.HEAP_MIN, S.HEAP_MAX, S.STATIC_MAX, S.MASK];

function chartFields(summary: Float64Array): number[] {
  const out: number[] = [];
  for (let k = 0; k < summary.length / SUMMARY_FIELDS; k++) for (const f of CHART_FIELDS) out.push(summary[SUMMARY_FIELDS * k + f]!);
  return out;
}

describe('the index in two stages', () => {
  test('the summaries are served before the events; requests for events are refused in words, then answered', async () => {
    const { bytes, file, summaries: summariesFile, release, session } = await heldSession('staged.mwtrace', 20_000);
    const server = await startServer({ rendererDir: dir, session, recent: new RecentList(path.join(dir, 'recent.json')) });
    // The build runs on this thread (tests run the sources, without the compiled worker): the server may close a
    // connection that idled through it, and a request sent on it fails before it reaches the server: sent again.
    const get = async (p: string): Promise<Response> => {
      for (let tries = 1; ; tries++) {
        try {
          return await apiGet(server, p);
        } catch (e) {
          if (tries === 3) throw e;
        }
      }
    };
    try {
      // The first request starts the build; once the summaries stand, the status says so.
      await get('api/index');
      await session.summaries();
      const status = (await (await get('api/index')).json()) as { state: string; meta: { events: number }; events: { state: string } };
      const model = decodeTrace(bytes);
      expect(status.state).toBe('ready');
      expect(status.meta.events).toBe(model.events.count);
      expect(status.events.state).toBe('building');
      expect(existsSync(summariesFile)).toBe(true);
      expect(existsSync(file)).toBe(false);
      // What the chart draws: the summaries and the fine rows.
      const summary = new Float64Array(await (await get('api/index/summary')).arrayBuffer());
      expect(summary.length).toBe(Math.ceil(model.events.count / 16384) * SUMMARY_FIELDS + status.meta.threadRows * THREAD_FIELDS);
      const fine = await get(`api/index/fine?from=0&to=${model.events.count}`);
      expect(fine.status).toBe(200);
      const fineRows = decodeFine(await fine.arrayBuffer());
      // What needs the events: refused, saying how far they are.
      for (const q of ['api/index/events?from=0&to=100', 'api/index/detail?event=5', 'api/index/next?from=-1&direction=1&class=free&thread=all']) {
        const r = await get(q);
        expect(r.status, q).toBe(503);
        expect(((await r.json()) as { error: string }).error, q).toMatch(/^events: building \d+% /);
      }
      release();
      const ix = await session.index();
      expect(ix.events).toBe(true);
      expect(session.eventsState.state).toBe('ready');
      const after = (await (await get('api/index')).json()) as typeof status;
      expect(after.events.state).toBe('ready');
      // The same chart as the whole index draws, which stands in for the summaries from now on.
      expect(chartFields(summary)).toEqual(chartFields(ix.summary));
      expect(decodeFine(await (await get(`api/index/fine?from=0&to=${model.events.count}`)).arrayBuffer())).toEqual(fineRows);
      const detail = (await (await get('api/index/detail?event=5')).json()) as { detail: unknown; stack: unknown };
      const whole = eventDetail(model, 5, staticSeries(model));
      expect(detail.detail).toEqual({ ...whole, timeNs: Math.round(whole.timeNs) });
      expect(detail.stack).toEqual(callStackAt(model, 5));
      expect((await get('api/index/events?from=0&to=100')).status).toBe(200);
      expect(existsSync(file)).toBe(true);
      expect(existsSync(summariesFile)).toBe(false);
    } finally {
      release();
      await server.close();
    }
  }, 120_000);

  test("summaries built with times (the lanes page's): the whole index's times and chart fields; a lane session draws from them before the events", async () => {
    const trace = write('timed.mwtrace', bigTrace(40_000));
    const whole = path.join(dir, 'timed-whole.mwindex');
    const timed = path.join(dir, 'timed.summaries');
    const plain = path.join(dir, 'plain.summaries');
    const { buildIndexFile } = await import('../../host/index-cache.js');
    buildIndexFile(trace, whole);
    buildSummaryFile(trace, timed, undefined, true);
    buildSummaryFile(trace, plain);
    const [w, t, p] = [TraceIndex.open(whole, trace)!, TraceIndex.open(timed, trace, true)!, TraceIndex.open(plain, trace, true)!];
    try {
      // The summary table's rows (a thread table follows them).
      const times = (x: TraceIndex): number[] => [...x.summary.subarray(0, x.meta.buckets * SUMMARY_FIELDS)].filter((_, i) => i % SUMMARY_FIELDS === S.TIME_MIN || i % SUMMARY_FIELDS === S.TIME_MAX);
      expect(w.meta.buckets).toBeGreaterThan(1);
      expect(times(t)).toEqual(times(w));
      expect(times(p).every(Number.isNaN)).toBe(true);
      expect(chartFields(t.summary)).toEqual(chartFields(w.summary));
      expect(t.meta.process).toEqual(w.meta.process);
      expect([t.meta.maxStack, t.meta.staticBytes, t.meta.events]).toEqual([w.meta.maxStack, w.meta.staticBytes, w.meta.events]);
    } finally {
      for (const x of [w, t, p]) x.close();
    }
    // A session opened as the lanes page's: its summaries stage (events held back) carries the times.
    const { session, release } = await heldSession('timed-session.mwtrace', 40_000, { timedSummaries: true });
    try {
      const s = await session.summaries();
      expect(s.events).toBe(false);
      expect(Number.isNaN(s.summary[S.TIME_MIN]!)).toBe(false);
    } finally {
      release();
      await session.index();
    }
  });

  test('a cached index serves both stages at once; a kept summaries file is reused, a stale or damaged one built again', async () => {
    const trace = write('kept.mwtrace', basicTrace().build());
    const dir = cacheDirFor(trace);
    const { index: file, summaries: summariesFile } = cacheFiles(dir);
    const stages = (p: BuildProgress[]): string[] => [...new Set(p.filter((x) => x.note === undefined).map((x) => x.stage))];
    // A summaries file of the trace as it is: the next build starts from it.
    prepareCache(trace, dir);
    buildSummaryFile(trace, summariesFile);
    let steps: BuildProgress[] = [];
    let staged = openTraceIndexStaged(trace, (p) => steps.push(p), dir);
    expect((await staged.summaries).events).toBe(false);
    (await staged.index).close();
    expect(stages(steps)).toEqual(['events']);
    expect(existsSync(summariesFile)).toBe(false);
    // The index cached: no build at all.
    steps = [];
    staged = openTraceIndexStaged(trace, (p) => steps.push(p), dir);
    expect(await staged.summaries).toBe(await staged.index);
    (await staged.index).close();
    expect(steps).toEqual([]);
    // The trace changed after a summaries file was written: neither it nor the index is used (the folder is cleared).
    buildSummaryFile(trace, summariesFile);
    utimesSync(trace, new Date(), new Date(Date.now() + 5000));
    expect(TraceIndex.open(summariesFile, trace, true)).toBeNull();
    steps = [];
    staged = openTraceIndexStaged(trace, (p) => steps.push(p), dir);
    (await staged.summaries).close();
    (await staged.index).close();
    expect(stages(steps)).toEqual(['summaries', 'events']);
    expect(steps.filter((p) => p.note !== undefined).map((p) => p.note)).toEqual([`the cache ${dir} was cleared and is built again: the trace changed since it was made`]);
    // A summaries file is not an index, nor the other way round.
    expect(TraceIndex.open(file, trace, true)).toBeNull();
    buildSummaryFile(trace, summariesFile);
    expect(TraceIndex.open(summariesFile, trace)).toBeNull();
    // A summaries file cut short (a disk that filled up, say) is not read: built again, saying so.
    rmSync(file);
    truncateSync(summariesFile, statSync(summariesFile).size - 9);
    expect(TraceIndex.open(summariesFile, trace, true)).toBeNull();
    steps = [];
    staged = openTraceIndexStaged(trace, (p) => steps.push(p), dir);
    (await staged.summaries).close();
    (await staged.index).close();
    expect(stages(steps)).toEqual(['summaries', 'events']);
    expect(steps.filter((p) => p.note !== undefined).map((p) => p.note)).toEqual([expect.stringMatching(/^.*summaries: .*cut short.*: built again$/)]);
  });

  test("Ctrl-C during `view`'s second stage leaves no index, a whole summaries file and no temporary file", async () => {
    const trace = write('second.mwtrace', bigTrace(400_000));
    const { interrupted, err, code } = await interruptViewAt(trace, /indexing second\.mwtrace: [1-9]0% \(the events\)/);
    expect(interrupted, err).toBe(true);
    expect(err).toMatch(/the chart's summaries ready \(\d+\.\d s\); indexing the events/);
    expect(code).toBe(130);
    expect(readdirSync(dir).filter((n) => n.startsWith('second.mwtrace.'))).toEqual(['second.mwtrace.mwcache']);
    expect(readdirSync(path.join(dir, 'second.mwtrace.mwcache')).sort()).toEqual(['cache.json', 'summaries']);
    const kept = TraceIndex.open(path.join(dir, 'second.mwtrace.mwcache', 'summaries'), trace, true);
    expect(kept?.meta.events).toBeGreaterThan(0);
    kept?.close();
  }, 120_000);
});

describe('the panels of index mode beside the two stages', () => {
  test("the panels' data waits for the chart's summaries only: computed and served while the events are built, kept in the cache folder", async () => {
    const { bytes, trace, file, release, session } = await heldSession('panels-staged.mwtrace', 3_000, { budgets: { heap: 128 } });
    // Asked before anything is built: it says what it waits for.
    expect(session.panels()).toEqual({ state: 'waiting', for: "the chart's summaries" });
    const server = await startServer({ rendererDir: dir, session, recent: new RecentList(path.join(dir, 'recent.json')) });
    const get = async (p: string): Promise<Response> => apiGet(server, p);
    try {
      await session.summaries();
      await expect.poll(async () => ((await (await get('api/index/panels')).json()) as { state: string }).state, { timeout: 60_000 }).toBe('ready');
      // The events are still held: the panels did not wait for them.
      expect(session.eventsState.state).toBe('building');
      expect((await get('api/index/detail?event=5')).status).toBe(503);
      const { panels } = (await (await get('api/index/panels')).json()) as { panels: IndexPanels };
      const source = FileSource.open(trace);
      try {
        expect(panels.tables).toEqual(JSON.parse(JSON.stringify(panelTables(streamSource(source), { budgets: { heap: 128 }, frameSizes: session.info.stack }))));
      } finally {
        source.close();
      }
      expect(panels.tables.summary.events).toBe(decodeTrace(bytes).events.count);
      // Kept in the cache folder, where they stay once the index stands.
      const panelsFile = cacheFiles(cacheDirFor(trace)).panels;
      expect(existsSync(panelsFile)).toBe(true);
      release();
      await session.index();
      expect(existsSync(panelsFile)).toBe(true);
      // The next session reads them back from there, whichever stage it is in.
      const again = await TraceSession.open(trace, { index: true, budgets: { heap: 128 } });
      again.panels();
      await expect.poll(() => again.panelsState.state, { timeout: 60_000 }).toBe('ready');
      expect(JSON.parse((again.panelsState as { json: string }).json)).toEqual(panels);
    } finally {
      release();
      await server.close();
    }
  }, 120_000);
});
