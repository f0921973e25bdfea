// The viewer in real Chromium on a trace opened through its index, whose index file is damaged after the page drew its
// chart (a bucket no longer matches its checksum): the click on an event is held while the host builds the index
// again (the page says the events are being built), then shows the event's detail as the undamaged index gives it;
// no raw error reaches the page.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { cacheDirFor, cacheFiles } from '../../host/index-cache.js';
import { S, SUMMARY_FIELDS } from '../../analysis/event-index.js';
import { bigTrace } from '../support/big-trace.js';
import { scratch } from '../support/programs.js';
import { selectedEvent, viewerOn, type Viewer } from './browser.js';

const dir = scratch('gui-index-damage');

describe('a damaged index under an open page', () => {
  let viewer: Viewer;
  const trace = path.join(dir, 'damaged.mwtrace');

  beforeAll(async () => {
    // More buckets than the host keeps decoded (64), so that the one damaged is read from the file when asked for.
    writeFileSync(trace, bigTrace(180_000));
    viewer = await viewerOn(trace, { index: true });
  }, 180_000);
  afterAll(() => viewer?.close());

  test('a jump to an event in a damaged bucket waits for the index built again, then shows its detail', async () => {
    const page = viewer.page;
    const file = cacheFiles(cacheDirFor(trace)).index;
    // The events indexed (the index file stands).
    await expect.poll(() => page.evaluate(() => document.getElementById('events-state')!.hidden), { timeout: 120_000 }).toBe(true);
    // One bit of bucket 60's events flipped: where it lies, from the summary table in the meta section (runtime/INDEX-FORMAT.md).
    const original = readFileSync(file);
    const bytes = Buffer.from(original);
    const dv = new DataView(bytes.buffer, bytes.byteOffset);
    const metaAt = dv.getFloat64(72, true);
    const tableAt = metaAt + Math.ceil((4 + dv.getUint32(metaAt, true)) / 8) * 8;
    const row = tableAt + 8 * SUMMARY_FIELDS * 60;
    const offset = dv.getFloat64(row + 8 * S.OFFSET, true);
    const length = dv.getFloat64(row + 8 * S.LENGTH, true);
    bytes[96 + offset + Math.floor(length / 2)]! ^= 0x04;
    writeFileSync(file, bytes);
    const e = 60 * 16384 + 100;
    await page.locator('#search').fill(String(e));
    await page.locator('#search-results li.jump').click();
    await expect.poll(() => selectedEvent(page), { timeout: 120_000 }).toBe(e);
    expect(await page.locator('#detail dl.facts dd').first().textContent()).toMatch(new RegExp(`^${e} · `));
    expect(await page.locator('#error').isHidden()).toBe(true);
    expect(viewer.errors).toEqual([]);
    // The host found the damage and built the index again: the file is whole once more.
    expect(readFileSync(file).equals(original)).toBe(true);
  }, 240_000);
});
