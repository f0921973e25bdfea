// Damage, to the trace and to the viewer's cache of it (host/index-cache.ts, host/index-file.ts): the index built for a
// damaged trace is read back whole wherever the streamed reading of `report` reads the trace; a damaged index, report
// or panels file is never used: refused when it is opened, or found when a bucket or block is read, then built again
// with a note saying so, every answer meanwhile either the undamaged one or a sentence; a cache made by another version
// or for the trace before it changed is cleared, saying so, and so are the files an earlier version kept beside it.
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { IndexDamagedError } from '../../analysis/event-index.js';
import { streamSource } from '../../analysis/trace/resolve-stream.js';
import { memorySource } from '../../analysis/trace/byte-source.js';
import { indexDetail, indexEvents, indexFine, IndexRebuildingError } from '../../host/index-api.js';
import { cacheDirFor, cacheFiles, openTraceIndex, prepareCache } from '../../host/index-cache.js';
import { TraceSession } from '../../host/trace-session.js';
import { bigTrace } from '../support/big-trace.js';
import { scratch } from '../support/programs.js';
import { rng as random } from '../support/random.js';

const dir = scratch('index-damage');
// How many damaged indexes: 30 in CI; test/fuzz/run-campaign.sh asks for more (MEMWRAP_FUZZ_INDEX_MUTANTS).
const indexMutants = Number(process.env.MEMWRAP_FUZZ_INDEX_MUTANTS ?? 30) || 30;

/** `bytes` with `flips` bits flipped at places `rnd` picks after `from`. */
function damaged(bytes: Uint8Array, rnd: () => number, flips: number, from = 0): Uint8Array {
  const out = bytes.slice();
  for (let k = 0; k < flips; k++) out[from + Math.floor(rnd() * (out.length - from))]! ^= 1 << Math.floor(rnd() * 8);
  return out;
}

/** What the page asks of an index for a few events, as the host answers it. */
async function answers(session: TraceSession, events: number): Promise<string> {
  const out: string[] = [];
  const step = Math.max(1, Math.floor(events / 40));
  for (let e = 0; e < events; e += step) out.push(JSON.stringify(await indexDetail(session, String(e))));
  out.push(Buffer.from(await indexEvents(session, '0', String(events))).toString('base64'));
  out.push(Buffer.from(await indexFine(session, '0', String(events))).toString('base64'));
  return out.join('\n');
}

describe('the index of a damaged trace', () => {
  test('is built, opened and read back for every damaged trace the streamed reading reads', async () => {
    const good = bigTrace(12_000);
    const rnd = random(30);
    let read = 0;
    for (let i = 0; i < 12; i++) {
      const trace = path.join(dir, `damaged-${i}.mwtrace`);
      const bytes = damaged(good, rnd, 1 + Math.floor(rnd() * 3), 64);
      writeFileSync(trace, bytes);
      // What `report` reads of it.
      let events: number;
      try {
        events = streamSource(memorySource(bytes)).run(() => []).events;
      } catch {
        continue;
      }
      const session = await TraceSession.open(trace, { index: true });
      const ix = await session.index();
      expect(ix.meta.events, `trace ${i}`).toBe(events);
      // Every bucket read back: none of what was just built is refused.
      await answers(session, events);
      read++;
    }
    expect(read).toBeGreaterThan(6);
  }, 300_000);
});

describe('a damaged cache', () => {
  test('a damaged index is never used: refused when opened or found when read, then built again, every answer whole or a sentence', async () => {
    const trace = path.join(dir, 'kept.mwtrace');
    writeFileSync(trace, bigTrace(12_000));
    const cache = cacheDirFor(trace);
    const file = cacheFiles(cache).index;
    const first = await TraceSession.open(trace, { index: true });
    const events = (await first.index()).meta.events;
    const want = await answers(first, events);
    const kept = readFileSync(file);
    // Where the meta section starts (runtime/INDEX-FORMAT.md): every other damage falls in it or in the header.
    const metaAt = new DataView(kept.buffer, kept.byteOffset).getFloat64(72, true);
    const rnd = random(31);
    const seen = { refusedWhenOpened: 0, foundWhenRead: 0, unharmed: 0 };
    for (let i = 0; i < indexMutants; i++) {
      const bytes = i % 2 === 0 ? damaged(kept, rnd, 1 + Math.floor(rnd() * 3)) : kept.slice();
      if (i % 2 === 1) {
        const at = rnd() < 0.3 ? Math.floor(rnd() * 96) : metaAt + Math.floor(rnd() * (kept.length - metaAt));
        bytes[at]! ^= 1 << Math.floor(rnd() * 8);
      }
      writeFileSync(file, bytes);
      const session = await TraceSession.open(trace, { index: true });
      await session.index();
      let got: string;
      try {
        got = await answers(session, events);
        if (session.notes.length > 0) seen.refusedWhenOpened++;
        else seen.unharmed++;
      } catch (e) {
        // Found as a bucket or block was read: a sentence, and the index built again for the next request.
        expect(e, `damage ${i}`).toBeInstanceOf(IndexRebuildingError);
        expect((e as Error).message).toMatch(/^events: building 0% \(.*does not match its checksum: the index is damaged; it is built again; asked again once it is\)$/);
        seen.foundWhenRead++;
        await session.index();
        got = await answers(session, events);
      }
      expect(got, `damage ${i}`).toBe(want);
      for (const note of session.notes) expect(note).toMatch(/(does not match its checksum|does not add up|cut short|not an index).*built again/);
    }
    // Every damaged index gave the undamaged answers (no silent difference) after one of these:
    console.log(`${indexMutants} damaged indexes: ${seen.refusedWhenOpened} refused when opened, ${seen.foundWhenRead} found when read, ${seen.unharmed} with the damage in bytes no answer read`);
    // Damage lands in the header and meta section (refused on opening) and in the buckets and blocks (found on reading).
    expect(seen.refusedWhenOpened).toBeGreaterThan(0);
    expect(seen.foundWhenRead).toBeGreaterThan(0);
  }, Math.max(300_000, indexMutants * 10_000));

  test('a cut or lengthened index is refused when opened, saying why', async () => {
    const trace = path.join(dir, 'cut.mwtrace');
    writeFileSync(trace, bigTrace(3_000));
    const notes: string[] = [];
    (await openTraceIndex(trace)).close();
    const file = cacheFiles(cacheDirFor(trace)).index;
    const kept = readFileSync(file);
    for (const bytes of [kept.subarray(0, kept.length - 1), Buffer.concat([kept, Buffer.from([0])]), kept.subarray(0, 50)]) {
      writeFileSync(file, bytes);
      (await openTraceIndex(trace, (p) => p.note !== undefined && notes.push(p.note))).close();
    }
    expect(notes).toEqual([expect.stringMatching(/cut short or added to: built again$/), expect.stringMatching(/cut short or added to: built again$/), expect.stringMatching(/(header does not match its checksum|not an index).*: built again$/)]);
  }, 120_000);

  test('a reader of a damaged bucket gets an IndexDamagedError naming it, never its numbers', async () => {
    const trace = path.join(dir, 'bucket.mwtrace');
    writeFileSync(trace, bigTrace(12_000));
    (await openTraceIndex(trace)).close();
    const file = cacheFiles(cacheDirFor(trace)).index;
    const bytes = readFileSync(file);
    // The middle of the first bucket (the buckets start at byte 96).
    bytes[500]! ^= 0x10;
    writeFileSync(file, bytes);
    const ix = await openTraceIndex(trace);
    expect(() => ix.reader.detail(3)).toThrow(IndexDamagedError);
    expect(() => ix.reader.detail(3)).toThrow(/bucket 0 does not match its checksum: the index is damaged/);
    ix.close();
  });

  test('a report file that does not verify is computed again, saying so', async () => {
    const trace = path.join(dir, 'report.mwtrace');
    writeFileSync(trace, bigTrace(500));
    const session = await TraceSession.open(trace, { index: true });
    await session.index();
    await expect.poll(() => session.reportState.state, { timeout: 60_000 }).toBe('ready');
    const file = cacheFiles(cacheDirFor(trace)).report;
    const text = readFileSync(file, 'utf8');
    writeFileSync(file, text.replace('Events  ', 'Events 9'));
    const again = await TraceSession.open(trace, { index: true });
    await again.index();
    await expect.poll(() => again.reportState.state, { timeout: 60_000 }).toBe('ready');
    expect((again.reportState as { text: string }).text).toBe((session.reportState as { text: string }).text);
    expect(again.notes).toEqual([`${file} does not match its checksum (damaged): computed again`]);
  }, 120_000);
});

describe('the cache folder', () => {
  test('made by another version, or for the trace before it changed: cleared and built again, saying so', async () => {
    const trace = path.join(dir, 'versions.mwtrace');
    writeFileSync(trace, bigTrace(300));
    const cache = cacheDirFor(trace);
    const files = cacheFiles(cache);
    (await openTraceIndex(trace)).close();
    const manifest = JSON.parse(readFileSync(files.manifest, 'utf8')) as { version: number };
    writeFileSync(files.manifest, JSON.stringify({ ...manifest, version: manifest.version - 1 }));
    expect(prepareCache(trace, cache)).toEqual([`the cache ${cache} was cleared and is built again: it was made by another version (cache ${manifest.version - 1}, this one makes ${manifest.version})`]);
    expect(readdirSync(cache)).toEqual(['cache.json']);
    expect(prepareCache(trace, cache)).toEqual([]);
    writeFileSync(files.manifest, '{ not json');
    writeFileSync(files.index, 'something');
    expect(prepareCache(trace, cache)).toEqual([`the cache ${cache} was cleared and is built again: its manifest is missing or damaged`]);
    expect(existsSync(files.index)).toBe(false);
  });

  test("an earlier version's files beside the trace are removed, saying so", () => {
    const trace = path.join(dir, 'legacy.mwtrace');
    writeFileSync(trace, bigTrace(300));
    for (const suffix of ['.mwindex', '.mwindex.summaries', '.mwindex.report', '.mwindex.panels']) writeFileSync(`${trace}${suffix}`, 'old');
    const cache = cacheDirFor(trace);
    expect(prepareCache(trace, cache)).toEqual([`removed what an earlier version kept beside the trace (legacy.mwtrace.mwindex, legacy.mwtrace.mwindex.summaries, legacy.mwtrace.mwindex.report, legacy.mwtrace.mwindex.panels); its cache is now ${cache}`]);
    expect(readdirSync(dir).filter((n) => n.startsWith('legacy.mwtrace.'))).toEqual(['legacy.mwtrace.mwcache']);
  });

  test('a cache elsewhere (a folder that cannot be written) is one folder all the same', async () => {
    const elsewhere = path.join(dir, 'elsewhere');
    mkdirSync(elsewhere, { recursive: true });
    const trace = path.join(dir, 'elsewhere.mwtrace');
    copyFileSync(path.join(dir, 'legacy.mwtrace'), trace);
    const cache = path.join(elsewhere, 'x.mwcache');
    (await openTraceIndex(trace, undefined, cache)).close();
    expect(readdirSync(cache).sort()).toEqual(['cache.json', 'index']);
  });
});
