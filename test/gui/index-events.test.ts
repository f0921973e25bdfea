// The page's side of an index built in two stages (gui/renderer/src/index-events.ts), against a fake host: a request
// for events refused with "events: building N%" is held and sent again once the host's status says the events are
// ready; the notice is told each state; of the chart's windows held only the latest is sent; a failed build's
// refusal reaches the caller; the refusal is recognised as the server words it and as Electron's IPC wraps it.
import { describe, expect, test } from 'vitest';
import type { IndexApi } from '../../gui/renderer/src/backend.js';
import { eventsBuilding, eventsNotice, EventsWatch, SupersededError } from '../../gui/renderer/src/index-events.js';
import type { BuildState, IndexStatusReply } from '../../host/session-types.js';
import type { IndexMeta } from '../../analysis/event-index.js';

/** A host whose events are building until `finish` (or `fail`); it counts the requests for events it answers. */
function fakeHost() {
  let events: BuildState = { state: 'building', fraction: 0.25, phase: 'reading the events', seconds: 1 };
  const answered: string[] = [];
  /** How often the status was asked. */
  let asked = 0;
  const refuse = (): void => {
    if (events.state === 'building') throw new Error(`events: building ${Math.floor(events.fraction * 100)}% (the chart's summaries are ready; the events are indexed after them, then this works)`);
    if (events.state === 'failed') throw new Error(`the events could not be indexed: ${events.message}`);
  };
  const api: IndexApi = {
    status: async (): Promise<IndexStatusReply> => {
      asked++;
      return { state: 'ready', seconds: 1, meta: {} as IndexMeta, events };
    },
    summary: async () => new ArrayBuffer(0),
    fine: async () => null,
    report: async () => ({ state: 'waiting' }),
    async events(from, to) {
      refuse();
      answered.push(`events ${from}-${to}`);
      return new ArrayBuffer(8);
    },
    async detail(event) {
      refuse();
      answered.push(`detail ${event}`);
      return { detail: { event } as never, stack: [] };
    },
    async next(from) {
      refuse();
      answered.push(`next ${from}`);
      return from + 1;
    },
  };
  return {
    api,
    answered,
    asked: () => asked,
    finish: () => (events = { state: 'ready', seconds: 9 }),
    progress: (fraction: number) => (events = { state: 'building', fraction, phase: 'reading the events', seconds: 2 }),
    fail: (message: string) => (events = { state: 'failed', message }),
  };
}

describe('requests for events while the host builds them', () => {
  test("the host's refusal is recognised as the server and Electron's IPC word it", () => {
    expect(eventsBuilding(new Error('events: building 42% (the chart…)'))).toBe(true);
    expect(eventsBuilding(new Error("Error invoking remote method 'cc-memwrap:index-detail': EventsBuildingError: events: building 7% (the chart…)"))).toBe(true);
    expect(eventsBuilding(new Error('no event 12: the trace has 10'))).toBe(false);
    expect(eventsBuilding('events: building 1%')).toBe(false);
    expect(eventsNotice({ state: 'building', fraction: 0.426, phase: '', seconds: 0 })).toMatch(/^events: building 42% — /);
    expect(eventsNotice({ state: 'ready', seconds: 1 })).toBeNull();
  });

  test('held until the status says the events are ready, then sent again; the notice told each state', async () => {
    const host = fakeHost();
    const watch = new EventsWatch(host.api.status);
    const api = watch.wrap(host.api);
    const seen: string[] = [];
    watch.onChange = (s) => seen.push(s.state === 'building' ? `building ${Math.floor(s.fraction * 100)}%` : s.state);
    watch.follow({ state: 'building', fraction: 0.1, phase: '', seconds: 0 });
    const detail = api.detail(5);
    const next = api.next(7, 1, 'free', null);
    let settled = false;
    void detail.then(() => (settled = true));
    // The watch has asked the status twice, and still holds both.
    await expect.poll(() => host.asked(), { timeout: 10_000 }).toBeGreaterThanOrEqual(2);
    expect(settled).toBe(false);
    expect(host.answered).toEqual([]);
    host.progress(0.6);
    await expect.poll(() => seen, { timeout: 10_000 }).toContain('building 60%');
    host.finish();
    expect((await detail).detail).toEqual({ event: 5 });
    expect(await next).toBe(8);
    expect(host.answered.sort()).toEqual(['detail 5', 'next 7']);
    expect(seen[0]).toBe('building 10%');
    expect(seen).toContain('building 60%');
    expect(seen.at(-1)).toBe('ready');
    // Ready: sent at once.
    expect((await api.detail(9)).detail).toEqual({ event: 9 });
  });

  test("of the chart's windows held, only the latest is sent", async () => {
    const host = fakeHost();
    const watch = new EventsWatch(host.api.status);
    watch.wrap(host.api);
    const chart = watch.latestWindow();
    const first = chart.events(0, 100);
    const second = chart.events(500, 600);
    host.finish();
    await expect(first).rejects.toBeInstanceOf(SupersededError);
    expect(new Uint8Array(await second).length).toBe(8);
    expect(host.answered).toEqual(['events 500-600']);
  });

  test("a build that fails: the held request gets the host's failure", async () => {
    const host = fakeHost();
    const watch = new EventsWatch(host.api.status);
    const api = watch.wrap(host.api);
    const shown: (string | null)[] = [];
    watch.onChange = (s) => shown.push(eventsNotice(s));
    const detail = api.detail(3);
    host.fail('no space left on device');
    await expect(detail).rejects.toThrow(/the events could not be indexed: no space left on device/);
    expect(shown.at(-1)).toMatch(/^events: the host could not index them \(no space left on device\)/);
  });
});
