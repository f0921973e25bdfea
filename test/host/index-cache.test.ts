// The viewer's index in the trace's cache folder (host/index-cache.ts, host/index-file.ts) and what the hosts answer
// from it (host/index-api.ts, the local server): built once and reused, built again when the trace changes, never left
// half-written, a truncated trace indexed up to its last whole record, and bad requests said plainly.
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, utimesSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { callStackAt, eventClassBit, eventClassOfKind, eventDetail } from '../../analysis/event-detail.js';
import { chartSeries, instrumentedHeap } from '../../analysis/lod.js';
import { decodeFine, F, FINE_FIELDS, INDEX_FINE, INDEX_VERSION } from '../../analysis/event-index.js';
import { orphaningEvents } from '../../analysis/linked.js';
import { staticSeries } from '../../analysis/timeline.js';
import { decodeTrace } from '../../analysis/trace/decode.js';
import { buildIndexFile, cacheDirFor, cacheFiles, keepText, openTraceIndex, TraceIndex, useIndex, INDEX_THRESHOLD } from '../../host/index-cache.js';
import { API_HEADER, startServer, type RunningServer } from '../../host/server.js';
import { runView } from '../../cli/view.js';
import { capture } from '../fixtures/cli-capture.js';
import { TraceSession } from '../../host/trace-session.js';
import { RecentList } from '../../host/recent.js';
import { packageRoot } from '../../package-root.js';
import { interruptViewAt } from '../support/interrupt-view.js';
import { bigTrace } from '../support/big-trace.js';
import { scratch } from '../support/programs.js';
import { apiGet } from '../support/viewer-api.js';
import { basicTrace } from '../fixtures/scenarios.js';
import { Kind } from '../../analysis/trace/format.js';
import { panelTables, type IndexPanels } from '../../analysis/panel-data.js';
import { FileSource } from '../../analysis/trace/file-source.js';
import { streamSource } from '../../analysis/trace/resolve-stream.js';

const dir = scratch('trace-index');

/** The demo trace (basicTrace) grown to exactly `size` bytes by its last chunk's reserved, unused space. */
function traceOfSize(size: number): Uint8Array {
  const b = basicTrace();
  const last = b.chunks.at(-1)!;
  const grow = size - b.build().length;
  last.capacity = Math.max(last.capacity ?? last.data.len, last.data.len) + grow;
  return b.build();
}

function write(name: string, bytes: Uint8Array): string {
  const p = path.join(dir, name);
  writeFileSync(p, bytes);
  return p;
}

/** Every event of the index as the decoded model has it (times to the nanosecond). */
function expectSameAsModel(ix: TraceIndex, bytes: Uint8Array): void {
  const model = decodeTrace(bytes);
  expect(ix.meta.events).toBe(model.events.count);
  const statics = staticSeries(model);
  const orphans = orphaningEvents(model);
  const step = Math.max(1, Math.floor(model.events.count / 2000));
  for (let e = 0; e < model.events.count; e += step) {
    const whole = eventDetail(model, e, statics, orphans);
    expect(ix.reader.detail(e)).toEqual({ ...whole, timeNs: Math.round(whole.timeNs) });
    expect(ix.reader.callStack(e)).toEqual(callStackAt(model, e));
  }
  // The fine rows, read from the file by range: min/max over their events as Float32.
  const series = chartSeries(model, null, statics);
  const iheap = instrumentedHeap(model);
  const n = model.events.count;
  expect(ix.meta.fineSize).toBe(INDEX_FINE);
  expect(ix.meta.fines).toBe(Math.ceil(n / INDEX_FINE));
  for (const [a, b] of [
    [0, n],
    [Math.floor(n / 2), n],
  ] as const) {
    const r = ix.reader.fine(a, b);
    expect(r.first).toBe(Math.floor(a / INDEX_FINE));
    expect(r.first + r.count).toBe(ix.meta.fines);
    for (let j = 0; j < r.count; j++) {
      const e0 = (r.first + j) * INDEX_FINE;
      const e1 = Math.min(n, e0 + INDEX_FINE);
      let mask = 0;
      for (let e = e0; e < e1; e++) mask |= eventClassBit(eventClassOfKind(model.events.kind[e]!));
      const row = Array.from(r.rows.subarray(FINE_FIELDS * j, FINE_FIELDS * (j + 1)));
      const want = [];
      want[F.ABOVE_MIN] = Math.fround(Math.min(...series.above.subarray(e0, e1)));
      want[F.ABOVE_MAX] = Math.fround(Math.max(...series.above.subarray(e0, e1)));
      want[F.HEAP_MIN] = Math.fround(Math.min(...series.heap.subarray(e0, e1)));
      want[F.HEAP_MAX] = Math.fround(Math.max(...series.heap.subarray(e0, e1)));
      want[F.STATIC_MAX] = Math.fround(Math.max(...statics.subarray(e0, e1)));
      want[F.MASK] = mask;
      want[F.IHEAP_MIN] = Math.fround(Math.min(...iheap.subarray(e0, e1)));
      want[F.IHEAP_MAX] = Math.fround(Math.max(...iheap.subarray(e0, e1)));
      expect(row, `fine row ${r.first + j}`).toEqual(want);
    }
  }
}

describe('index file', () => {
  test('when the viewer uses an index: above the threshold, or as MEMWRAP_VIEW_INDEX says', () => {
    expect(useIndex(INDEX_THRESHOLD, {})).toBe(false);
    expect(useIndex(INDEX_THRESHOLD + 1, {})).toBe(true);
    expect(useIndex(10, { MEMWRAP_VIEW_INDEX: '1' })).toBe(true);
    expect(useIndex(INDEX_THRESHOLD * 4, { MEMWRAP_VIEW_INDEX: '0' })).toBe(false);
  });

  test('a trace of the threshold\'s size opens whole, one a byte larger through its index: in a session and in `view`', async () => {
    expect(INDEX_THRESHOLD).toBe(4 << 20);
    const saved = process.env.MEMWRAP_VIEW_INDEX;
    delete process.env.MEMWRAP_VIEW_INDEX;
    const renderer = path.join(dir, 'renderer');
    mkdirSync(renderer, { recursive: true });
    writeFileSync(path.join(renderer, 'index.html'), '<!doctype html>');
    try {
      for (const [size, mode] of [
        [INDEX_THRESHOLD, undefined],
        [INDEX_THRESHOLD + 1, 'index'],
      ] as const) {
        // The demo trace with its chunk's reserved space grown, as the runtime leaves it: the same events.
        const bytes = traceOfSize(size);
        expect(bytes.length).toBe(size);
        expect(decodeTrace(bytes).events.count).toBe(decodeTrace(basicTrace().build()).events.count);
        const trace = write(`boundary-${size}.mwtrace`, bytes);
        expect(useIndex(statSync(trace).size)).toBe(mode === 'index');
        expect((await TraceSession.open(trace)).info.mode).toBe(mode);
        let running: RunningServer | null = null;
        const r = await capture((a, io) => runView(a, io, { electron: null, rendererDir: renderer, recentFile: path.join(dir, 'recent.json'), onServer: (s) => (running = s) }), [trace, '--browser']);
        expect(r.code, r.err).toBe(0);
        const server = running as RunningServer | null;
        try {
          const api = (p: string): Promise<Response> => fetch(new URL(p, server!.url), { headers: { [API_HEADER]: '1', cookie: server!.cookie } });
          expect(((await (await api('/api/session')).json()) as { mode?: string }).mode).toBe(mode);
          const whole = await api('/api/trace');
          expect(whole.status).toBe(mode === 'index' ? 409 : 200);
          if (mode === undefined) expect((await whole.arrayBuffer()).byteLength).toBe(size);
        } finally {
          await server!.close();
        }
      }
    } finally {
      if (saved !== undefined) process.env.MEMWRAP_VIEW_INDEX = saved;
    }
  });

  test('built once beside the trace, then reused; built again when the trace changes', async () => {
    const bytes = bigTrace(3000);
    const trace = write('reuse.mwtrace', bytes);
    const file = cacheFiles(cacheDirFor(trace)).index;
    expect(file).toBe(`${trace}.mwcache/index`);
    let steps = 0;
    const first = await openTraceIndex(trace, () => steps++);
    expect(steps).toBeGreaterThan(0);
    expect(existsSync(file)).toBe(true);
    expectSameAsModel(first, bytes);
    first.close();
    const built = statSync(file).mtimeMs;
    steps = 0;
    const again = await openTraceIndex(trace, () => steps++);
    expect(steps).toBe(0);
    expect(statSync(file).mtimeMs).toBe(built);
    again.close();
    // A new trace under the same name (another size and time): the cache no longer matches.
    const other = bigTrace(2000);
    writeFileSync(trace, other);
    utimesSync(trace, new Date(), new Date(Date.now() + 5000));
    expect(TraceIndex.open(file, trace)).toBeNull();
    const rebuilt = await openTraceIndex(trace, () => steps++);
    expect(steps).toBeGreaterThan(0);
    expectSameAsModel(rebuilt, other);
    rebuilt.close();
  });

  test('a damaged or foreign index file is not used: it is built again', async () => {
    const bytes = basicTrace().build();
    const trace = write('damaged.mwtrace', bytes);
    const file = cacheFiles(cacheDirFor(trace)).index;
    (await openTraceIndex(trace)).close();
    truncateSync(file, statSync(file).size - 9);
    expect(TraceIndex.open(file, trace)).toBeNull();
    writeFileSync(file, 'not an index at all, but long enough to have a header of sixty-four bytes......');
    expect(TraceIndex.open(file, trace)).toBeNull();
    // An index of the previous format (no fine rows) is built again; so is one whose fine rows run into its meta.
    const patch = (at: number, bytes: Uint8Array): void => {
      const fd = openSync(file, 'r+');
      writeSync(fd, bytes, 0, bytes.length, at);
      closeSync(fd);
    };
    for (const [at, bytes] of [
      [8, new Uint8Array(new Uint32Array([INDEX_VERSION - 1]).buffer)],
      [64, new Uint8Array(new Float64Array([1e12]).buffer)],
    ] as const) {
      (await openTraceIndex(trace)).close();
      const ok = TraceIndex.open(file, trace);
      expect(ok).not.toBeNull();
      ok!.close();
      patch(at, bytes);
      expect(TraceIndex.open(file, trace), `header byte ${at}`).toBeNull();
    }
    const ix = await openTraceIndex(trace);
    expectSameAsModel(ix, bytes);
    ix.close();
  });

  test('a truncated trace is indexed up to its last whole record, as the decoder reads it', async () => {
    const whole = bigTrace(2000);
    const cut = whole.subarray(0, Math.floor(whole.length * 0.6) + 3);
    const trace = write('truncated.mwtrace', cut);
    const ix = await openTraceIndex(trace);
    const model = decodeTrace(cut);
    expect(model.events.count).toBeGreaterThan(1000);
    expect(ix.meta.events).toBe(model.events.count);
    expect(ix.meta.problems.map((p) => p.message)).toEqual(model.problems.map((p) => p.message));
    expectSameAsModel(ix, cut);
    ix.close();
  });

  test('the folder cannot be written: the index goes to the user cache folder', () => {
    const cache = path.join(dir, 'cache');
    // /proc is never writable: the index of a trace there would go to the cache folder.
    const p = cacheDirFor('/proc/self/some.mwtrace', { XDG_CACHE_HOME: cache });
    expect(p.startsWith(path.join(cache, 'cc-memwrap', 'index') + path.sep)).toBe(true);
    expect(p.endsWith('.mwcache')).toBe(true);
  });

  test('a build killed outright leaves no index; the next build removes its temporary files', async () => {
    const trace = write('killed.mwtrace', bigTrace(400_000));
    const file = `${trace}.mwindex`;
    const script = `import { buildIndexFile } from ${JSON.stringify(path.join(packageRoot, 'dist/host/index-cache.js'))};
      buildIndexFile(${JSON.stringify(trace)}, ${JSON.stringify(file)}, (p) => { if (p.fraction > 0.1) process.stdout.write('x'); });`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    expect(existsSync(file)).toBe(false);
    expect(readdirSync(dir).filter((n) => n.startsWith('killed.mwtrace.mwindex.tmp-')).length).toBeGreaterThan(0);
    buildIndexFile(trace, file);
    expect(readdirSync(dir).filter((n) => n.startsWith('killed.mwtrace.mwindex'))).toEqual(['killed.mwtrace.mwindex']);
  }, 120_000);

  test('Ctrl-C during `view`\'s build leaves no index and no temporary file', async () => {
    const trace = write('interrupted.mwtrace', bigTrace(400_000));
    const { interrupted, err, code } = await interruptViewAt(trace, /indexing interrupted\.mwtrace: [1-9]/);
    expect(interrupted, err).toBe(true);
    expect(code).toBe(130);
    // The cache folder holds its manifest, nothing else.
    expect(readdirSync(dir).filter((n) => n.startsWith('interrupted.mwtrace.'))).toEqual(['interrupted.mwtrace.mwcache']);
    expect(readdirSync(path.join(dir, 'interrupted.mwtrace.mwcache'))).toEqual(['cache.json']);
  }, 120_000);
});

describe('the report of index mode', () => {
  test('computed after the index, kept in its cache folder, and read back by the next session', async () => {
    const trace = write('report.mwtrace', bigTrace(500));
    const session = await TraceSession.open(trace, { index: true });
    const ix = await session.index();
    await expect.poll(() => session.reportState.state, { timeout: 60_000 }).toBe('ready');
    const text = (session.reportState as { text: string }).text;
    expect(text).toMatch(/^Trace {8}report\.mwtrace /);
    expect(text).toContain(`Events       ${ix.meta.events.toLocaleString('en-US')}`);
    expect(text).toMatch(/Heap by function/);
    const kept = cacheFiles(cacheDirFor(trace)).report;
    expect(existsSync(kept)).toBe(true);
    // Kept under the same key, another text: the next session reads what is kept.
    const content = readFileSync(kept, 'utf8');
    keepText(kept, (JSON.parse(content.slice(0, content.indexOf('\n'))) as { key: unknown }).key, 'kept');
    const again = await TraceSession.open(trace, { index: true });
    await again.index();
    await expect.poll(() => again.reportState).toEqual({ state: 'ready', text: 'kept' });
  }, 120_000);
});

describe('the panels of index mode', () => {
  test('computed once the page asks, served by the local server as the streamed panels\' data, kept in the cache folder', async () => {
    const bytes = bigTrace(400);
    const trace = write('panels.mwtrace', bytes);
    const session = await TraceSession.open(trace, { index: true, budgets: { heap: 128 } });
    await session.index();
    const panelsFile = cacheFiles(cacheDirFor(trace)).panels;
    const server = await startServer({ rendererDir: dir, session, recent: new RecentList(path.join(dir, 'recent.json')) });
    const get = async (): Promise<{ state: string; panels?: IndexPanels }> => (await apiGet(server, 'api/index/panels')).json() as Promise<{ state: string; panels?: IndexPanels }>;
    try {
      expect(['waiting', 'computing']).toContain((await get()).state);
      await expect.poll(async () => (await get()).state, { timeout: 60_000 }).toBe('ready');
      const { panels } = await get();
      const file = FileSource.open(trace);
      try {
        const streamed = panelTables(streamSource(file), { budgets: { heap: 128 }, frameSizes: session.info.stack });
        expect(panels!.tables).toEqual(JSON.parse(JSON.stringify(streamed)));
      } finally {
        file.close();
      }
      const model = decodeTrace(bytes);
      expect(panels!.tables.summary.events).toBe(model.events.count);
      expect(panels!.tables.budgets[0]!.exceeded).toBe(true);
      expect(typeof panels!.extras.flame).toBe('object');
      expect(existsSync(panelsFile)).toBe(true);
    } finally {
      await server.close();
    }
    // The next session reads them back (kept under the same key, with a checksum of its own); other budgets make them again.
    const kept = readFileSync(panelsFile, 'utf8');
    const key = (JSON.parse(kept.slice(0, kept.indexOf('\n'))) as { key: unknown }).key;
    keepText(panelsFile, key, kept.slice(kept.indexOf('\n') + 1).replace('"events":', '"events":7,"was":'));
    const again = await TraceSession.open(trace, { index: true, budgets: { heap: 128 } });
    again.panels();
    await expect.poll(() => again.panelsState.state, { timeout: 60_000 }).toBe('ready');
    expect((again.panelsState as { json: string }).json).toContain('"events":7,"was":');
    // A damaged body (one byte changed: it no longer matches its checksum) is computed again, saying so, not handed to the page.
    const flipped = kept.slice(0, kept.length - 40) + String.fromCharCode(kept.charCodeAt(kept.length - 40) ^ 1) + kept.slice(kept.length - 39);
    writeFileSync(panelsFile, flipped);
    const damaged = await TraceSession.open(trace, { index: true, budgets: { heap: 128 } });
    damaged.panels();
    await expect.poll(() => damaged.panelsState.state, { timeout: 60_000 }).toBe('ready');
    expect(damaged.notes).toEqual([`${panelsFile} does not match its checksum (damaged): computed again`]);
    const original = JSON.parse(kept.slice(kept.indexOf('\n') + 1)) as IndexPanels;
    expect((JSON.parse((damaged.panelsState as { json: string }).json) as IndexPanels).tables).toEqual(original.tables);
    const other = await TraceSession.open(trace, { index: true, budgets: { heap: 4096 } });
    other.panels();
    await expect.poll(() => other.panelsState.state, { timeout: 60_000 }).toBe('ready');
    expect((other.panelsState as { json: string }).json).not.toContain('"was":');
  }, 120_000);
});

describe('the panels of index mode, the trace gone', () => {
  test('a trace removed after its index was built: the panels fail saying so, in one line naming it', async () => {
    const trace = write('gone.mwtrace', bigTrace(50));
    const session = await TraceSession.open(trace, { index: true });
    await session.index();
    rmSync(trace);
    expect(session.panels().state).toBe('waiting');
    await expect.poll(() => session.panelsState.state, { timeout: 60_000 }).toBe('failed');
    expect(session.panelsState).toEqual({ state: 'failed', message: `${trace}: no such file` });
  }, 60_000);
});

describe('index API', () => {
  test('the local server answers an index-mode session: state, summaries, ranges, details, the next event; bad requests in words', async () => {
    const bytes = basicTrace().build();
    const trace = write('served.mwtrace', bytes);
    const session = await TraceSession.open(trace, { index: true });
    expect(session.info.mode).toBe('index');
    expect(() => session.bytes).toThrow(/opened through its index/);
    await session.index();
    const server = await startServer({ rendererDir: dir, session, recent: new RecentList(path.join(dir, 'recent.json')) });
    const get = async (p: string): Promise<Response> => apiGet(server, p);
    try {
      const status = (await (await get('api/index')).json()) as { state: string; meta: { events: number } };
      const model = decodeTrace(bytes);
      expect(status.state).toBe('ready');
      expect(status.meta.events).toBe(model.events.count);
      expect((await get('api/trace')).status).toBe(409);
      const detail = (await (await get('api/index/detail?event=5')).json()) as { detail: unknown; stack: unknown };
      const whole = eventDetail(model, 5, staticSeries(model));
      expect(detail.detail).toEqual({ ...whole, timeNs: Math.round(whole.timeNs) });
      expect(detail.stack).toEqual(callStackAt(model, 5));
      const range = new Uint8Array(await (await get('api/index/events?from=0&to=1000')).arrayBuffer());
      expect(new DataView(range.buffer).getUint32(0, true)).toBe(model.events.count);
      const fine = decodeFine(await (await get('api/index/fine?from=0&to=1000')).arrayBuffer());
      expect(fine.first).toBe(0);
      expect(fine.count).toBe(Math.ceil(model.events.count / INDEX_FINE));
      const next = (await (await get('api/index/next?from=-1&direction=1&class=free&thread=all')).json()) as { event: number };
      expect(model.events.kind[next.event]).toBe(Kind.FREE);
      for (const [q, message] of [
        ['api/index/detail?event=abc', /event must be a whole number/],
        [`api/index/detail?event=${model.events.count}`, /no event/],
        ['api/index/events?from=9&to=3', /ends before it starts/],
        ['api/index/fine?from=9&to=3', /ends before it starts/],
        ['api/index/fine?from=x&to=3', /from must be a whole number/],
        ['api/index/next?from=0&direction=2&class=free&thread=all', /direction must be 1 or -1/],
        ['api/index/next?from=0&direction=1&class=leak&thread=all', /class must be one of/],
      ] as const) {
        const r = await get(q);
        expect(r.status, q).toBe(400);
        expect(((await r.json()) as { error: string }).error).toMatch(message);
      }
    } finally {
      await server.close();
    }
  });
});
