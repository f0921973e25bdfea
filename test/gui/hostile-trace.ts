// A hostile trace for the viewer's tests: function, file and object names holding markup, a source file full of markup, and source paths that climb out of the source root.
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { S, sourceSites, TraceBuilder } from '../fixtures/trace-builder.js';

export const SCRIPT_NAME = '<script>window.pwned = 1</script>';
export const IMG_NAME = '<img src=x onerror="window.pwned = 2">';
export const SECRET = 'SECRET-OUTSIDE-THE-ROOT';

/**
 * Layout: <tmp>/outside/etc/passwd (a secret) and <tmp>/outside/root/src/{evil.c, link.c → the secret}. The run's
 * working directory, the source root, is <tmp>/outside/root: "../etc/passwd" reaches the secret, "../../etc/passwd"
 * climbs further, and link.c is inside by name but not after its symlink.
 */
export function hostileTrace(dir: string): { trace: string; root: string } {
  const outside = path.join(dir, 'outside');
  const root = path.join(outside, 'root');
  mkdirSync(path.join(outside, 'etc'), { recursive: true });
  mkdirSync(path.join(root, 'src'), { recursive: true });
  writeFileSync(path.join(outside, 'etc', 'passwd'), `${SECRET}\n`);
  writeFileSync(
    path.join(root, 'src', 'evil.c'),
    `/* ${SCRIPT_NAME} */\nint main(void) {\n  char *s = "${IMG_NAME}";\n  return s[0];\n}\n`,
  );
  symlinkSync(path.join(outside, 'etc', 'passwd'), path.join(root, 'src', 'link.c'));
  const b = new TraceBuilder({ complete: true });
  const t = b.thread(0);
  t.threadBegin(1);
  t.program(path.join(root, 'prog'), root);
  t.unit(1, [
    { kind: S.ENTRY, file: 'src/evil.c', func: SCRIPT_NAME, name: SCRIPT_NAME, line: 2 }, // 1
    { kind: S.MALLOC, file: '../etc/passwd', func: SCRIPT_NAME, name: 'malloc', line: 1 }, // 2
    { kind: S.MALLOC, file: '../../etc/passwd', func: IMG_NAME, name: IMG_NAME, line: 1 }, // 3
    { kind: S.MALLOC, file: 'src/link.c', func: SCRIPT_NAME, name: 'malloc', line: 1 }, // 4
    { kind: S.MALLOC, file: 'src/evil.c', func: SCRIPT_NAME, name: 'malloc', line: 3 }, // 5
    { kind: S.RETURN, file: 'src/evil.c', func: SCRIPT_NAME, name: SCRIPT_NAME, line: 4 }, // 6
    // As the build recorded them: evil.c as it is, link.c as an honest file (a symbolic link to the secret now).
    ...sourceSites([
      { file: 'src/evil.c', disk: path.join(root, 'src', 'evil.c') },
      { file: 'src/link.c', disk: path.join(root, 'src', 'evil.c') },
    ]),
  ]);
  t.enter(1, 128);
  for (const site of [2, 3, 4, 5]) t.alloc({ site, size: 64, addr: 0x1000 * site });
  t.exit(6);
  t.end(0, 0);
  const trace = path.join(dir, 'hostile.mwtrace');
  writeFileSync(trace, b.build());
  return { trace, root };
}
