// The source pane of the viewer (Chromium, the local server with its session token) shows a file the build recorded
// as it was built; a file changed since the build is refused in words, or, from a folder the user named with
// --source-root, shown with a note saying it changed.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { S, sourceSites, TraceBuilder } from '../fixtures/trace-builder.js';
import { scratch } from '../support/programs.js';
import { clickEvent, shot, viewerOn, type Viewer } from './browser.js';

const root = scratch('gui-source-checks');
const kept = path.join(root, 'kept.c');
const edited = path.join(root, 'edited.c');
writeFileSync(kept, 'int main(void)\n{\n  char *p = malloc(16);\n  return 0;\n}\n');
writeFileSync(edited, 'void grow(void)\n{\n  char *q = malloc(32);\n}\n');

/** A run in `root` whose sites are in kept.c and edited.c, both recorded as built; edited.c is changed afterwards. */
function trace(): string {
  const b = new TraceBuilder({ complete: true, minor: 5 });
  const t = b.thread(0);
  t.threadBegin(1);
  t.program(path.join(root, 'prog'), root);
  t.unit(1, [
    { kind: S.ENTRY, file: kept, func: 'main', name: 'main', line: 1 }, // 1
    { kind: S.MALLOC, file: kept, func: 'main', name: 'malloc', line: 3 }, // 2
    { kind: S.MALLOC, file: edited, func: 'grow', name: 'malloc', line: 3 }, // 3
    { kind: S.RETURN, file: kept, func: 'main', name: 'main', line: 4 }, // 4
    ...sourceSites([kept, edited]),
  ]);
  t.enter(1, 128);
  t.alloc({ site: 2, size: 16, addr: 0x1000 });
  t.alloc({ site: 3, size: 32, addr: 0x2000 });
  t.exit(4);
  t.end(0, 0);
  const file = path.join(root, 'run.mwtrace');
  writeFileSync(file, b.build());
  writeFileSync(edited, 'void grow(void)\n{\n  char *q = malloc(64); /* edited after the build */\n}\n');
  return file;
}

describe('the source pane and the build’s hashes (Chromium)', () => {
  const file = trace();
  let plain: Viewer;
  let chosen: Viewer;
  beforeAll(async () => {
    plain = await viewerOn(file);
    chosen = await viewerOn(file, { sourceRoot: root });
  });
  afterAll(async () => {
    await plain?.close();
    await chosen?.close();
  });

  test('a file as built is shown; one changed since the build is refused in words', async () => {
    // Events: 0 THREAD_BEGIN, 1 ENTER, 2 ALLOC in kept.c, 3 ALLOC in edited.c.
    await clickEvent(plain.page, 2);
    await plain.page.waitForSelector('.code .ln.selected');
    expect(await plain.page.locator('.code').textContent()).toContain('malloc(16)');
    await clickEvent(plain.page, 3);
    await plain.page.waitForSelector('#source-body .missing');
    expect(await plain.page.locator('#source-body').textContent()).toMatch(/edited\.c: changed since the build .* not shown; to see it as it is now, name its folder: --source-root DIR/);
    expect(await plain.page.locator('#source-body').textContent()).not.toContain('edited after the build');
    await shot(plain.page, 'source-changed-refused');
    expect(plain.errors).toEqual([]);
  });

  test('under --source-root, the changed file is shown as it is now, with a note above it', async () => {
    await clickEvent(chosen.page, 3);
    await chosen.page.waitForSelector('#source-body .source-note');
    expect(await chosen.page.locator('#source-body .source-note').textContent()).toMatch(/edited\.c changed since the build: this is the file as it is now under /);
    expect(await chosen.page.locator('.code').textContent()).toContain('edited after the build');
    await clickEvent(chosen.page, 2);
    // edited.c's lines are selected too until kept.c's replace them: wait for kept.c's text, not a selected line.
    await chosen.page.waitForFunction(() => document.querySelector('.code')?.textContent?.includes('malloc(16)') === true);
    expect(await chosen.page.locator('#source-body .source-note').count()).toBe(0);
    await clickEvent(chosen.page, 3);
    await chosen.page.waitForSelector('#source-body .source-note');
    await shot(chosen.page, 'source-changed-note');
    expect(chosen.errors).toEqual([]);
  });
});
