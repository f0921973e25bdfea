// A viewer session's source root and source files (host/trace-session.ts): the root from the trace's first records
// (its program record) as the session opens, the files it names (a walk of every record) on the first request for a
// source; a trace whose program record comes after its first events gives its root from that walk, as before.
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { TraceSession } from '../../host/trace-session.js';
import { DEMO_SITES } from '../fixtures/scenarios.js';
import { TraceBuilder } from '../fixtures/trace-builder.js';
import { scratch } from '../support/programs.js';

const dir = scratch('session-sources');

/** A trace of /home/<user>/demo with DEMO_SITES under that folder, its program record before or after its first event. */
function trace(name: string, user: string, programFirst: boolean): string {
  const b = new TraceBuilder({ complete: true });
  const t = b.thread(0);
  t.threadBegin(1);
  if (programFirst) t.program(`/home/${user}/demo`, `/home/${user}`);
  t.unit(1, DEMO_SITES);
  t.enter(1, 128);
  if (!programFirst) t.program(`/home/${user}/demo`, `/home/${user}`);
  t.exit(2);
  t.end(0, 0);
  const file = path.join(dir, name);
  writeFileSync(file, b.build());
  return file;
}

describe("a session's source root and files", () => {
  test('the root from the program record before the events; the named files served from under it', async () => {
    const s = await TraceSession.open(trace('first.mwtrace', 'early', true));
    expect(s.info.sourceRoot).toBe('/home/early');
    // demo.c is named, but the trace records no content hash for it (so it is refused for that, before its absence);
    // a file the trace does not name is refused as such.
    expect(s.source('demo.c')).toMatchObject({ ok: false, reason: 'unverified' });
    expect(s.source('other.c')).toMatchObject({ ok: false, reason: 'not-named' });
    expect(Object.keys(s.allSources())).toEqual(['demo.c']);
  });

  test('a program record after the first event: the root from the walk of every record', async () => {
    const s = await TraceSession.open(trace('late.mwtrace', 'late', false));
    expect(s.info.sourceRoot).toBe('/home/late');
    expect(s.source('demo.c')).toMatchObject({ ok: false, reason: 'unverified' });
  });

  test('--source-root wins over both', async () => {
    const s = await TraceSession.open(trace('rooted.mwtrace', 'early', true), { sourceRoot: '/srv/tree' });
    expect(s.info.sourceRoot).toBe('/srv/tree');
    // A root the user named vouches for the files under it: demo.c is looked for there.
    expect(s.source('demo.c')).toMatchObject({ ok: false, reason: 'missing', message: 'demo.c: not found under /srv/tree' });
  });
});
