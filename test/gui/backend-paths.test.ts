// The page's own check of a source path against the source root (gui/renderer/src/backend.ts), which spares the
// browser a request the server would refuse: it must refuse exactly what path.resolve puts outside the root.
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { outsideRoot } from '../../gui/renderer/src/backend.js';

describe('outsideRoot', () => {
  const root = '/home/student/demo';
  test.each([
    ['list.c', false],
    ['src/./list.c', false],
    ['/home/student/demo/src/list.c', false],
    ['/home/student/demo', false],
    ['../etc/passwd', true],
    ['../../etc/passwd', true],
    ['src/../../demo2/x.c', true],
    ['/home/student/demo2/x.c', true],
    ['/usr/include/stdio.h', true],
    ['//home//student/demo/a.c', false],
  ])('%s: refused %s, as path.resolve puts it', (file, refused) => {
    const inside = path.resolve(root, file) === root || path.resolve(root, file).startsWith(root + '/');
    expect(inside).toBe(!refused);
    const r = outsideRoot(file, root);
    expect(r === null).toBe(!refused);
    if (r !== null) expect(r).toEqual({ ok: false, file, reason: 'outside-root', message: `${file}: outside the source root ${root}` });
  });

  test('no root yet, or a NUL in the path: the server decides', () => {
    expect(outsideRoot('../x', null)).toBeNull();
    expect(outsideRoot('a\0b', root)).toBeNull();
  });
});
