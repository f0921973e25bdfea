// How site locations are shown: absolute in the trace, relative to the run's
// working directory in reports when they lie under it.
import { describe, expect, it } from 'vitest';
import { siteLocation, type SiteInfo } from '../../analysis/sites.js';

const info = (file: string | null): SiteInfo => ({ kind: 4, file, line: 31, func: 'main', name: 'malloc' });

describe('siteLocation', () => {
  it('shows files under the working directory relative to it', () => {
    expect(siteLocation(info('/home/me/proj/src/list.c'), '/home/me/proj')).toBe('src/list.c:31');
    expect(siteLocation(info('/home/me/proj/src/list.c'), '/home/me/proj/')).toBe('src/list.c:31');
  });

  it('keeps other paths whole, and says ? for a missing name', () => {
    expect(siteLocation(info('/home/me/projects/x.c'), '/home/me/proj')).toBe('/home/me/projects/x.c:31');
    expect(siteLocation(info('/usr/include/stdio.h'), null)).toBe('/usr/include/stdio.h:31');
    expect(siteLocation(info(null), '/x')).toBe('?:31');
  });
});
