// Index mode while the host still builds the events of a trace's index (its second stage: the chart's summaries come
// first, host/index-cache.ts openTraceIndexStaged). The host refuses a request that needs the events (the events in
// view, an event's detail, the next event of a class) in words starting "events: building N%" (host/index-api.ts);
// here such a request is held, the host's status asked every half second, and the request sent again once the events
// are ready. Whoever shows the page's notice ("events: building 42%") is told each change.
import type { BuildState } from '../../../host/session-types.js';
import type { IndexApi } from './backend.js';

/** How often the host is asked how far the events are while they are built (ms). */
const POLL_MS = 500;

/** Whether `e` is the host's refusal of a request for events while they are built (from the server or, wrapped, over IPC). */
export function eventsBuilding(e: unknown): boolean {
  return e instanceof Error && /events: building \d+%/.test(e.message);
}

/** What the page says of the events while they are built or if they failed; null once they are ready. */
export function eventsNotice(s: BuildState): string | null {
  if (s.state === 'ready') return null;
  if (s.state === 'failed') return `events: the host could not index them (${s.message}); the chart still shows the summaries`;
  return `events: building ${Math.floor(s.fraction * 100)}% — the chart is drawn from the summaries; details, events one by one and jumps work once they are indexed`;
}

/** A held request that a newer one of its kind replaced before the events were ready. */
export class SupersededError extends Error {
  override name = 'SupersededError';
}

/** The events' state as the page knows it, followed from the host while they are built. */
export class EventsWatch {
  private state: BuildState = { state: 'ready', seconds: 0 };
  private ready: Promise<void> = Promise.resolve();
  private release: () => void = () => {};
  private polling = false;
  private raw: IndexApi | null = null;
  private wrapped: IndexApi | null = null;
  /** Told each change of the events' state (the page's notice). */
  onChange: (s: BuildState) => void = () => {};

  constructor(private readonly status: IndexApi['status']) {}

  get current(): BuildState {
    return this.state;
  }

  /** The events' state as the host's status gave it (at load): followed until they are ready when they are not. */
  follow(s: BuildState): void {
    this.set(s);
  }

  private set(s: BuildState): void {
    const was = this.state.state;
    this.state = s;
    if (s.state === 'building' && was !== 'building') this.ready = new Promise((r) => (this.release = r));
    if (s.state !== 'building') this.release();
    this.onChange(s);
    if (s.state === 'building') void this.poll();
  }

  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      while (this.state.state === 'building') {
        await new Promise((r) => setTimeout(r, POLL_MS));
        let next: BuildState;
        try {
          const s = await this.status();
          next = s.state === 'ready' ? s.events : s.state === 'failed' ? s : { state: 'building', fraction: 0, phase: s.phase, seconds: s.seconds };
        } catch (e) {
          next = { state: 'failed', message: (e as Error).message };
        }
        this.set(next);
      }
    } finally {
      this.polling = false;
    }
  }

  /**
   * `call`, sent again once the events are ready whenever the host says they are still being built; unless `stale`
   * says by then that a newer request took its place (it is then refused with SupersededError, not sent).
   */
  async held<T>(call: () => Promise<T>, stale: () => boolean = () => false): Promise<T> {
    for (;;) {
      try {
        return await call();
      } catch (e) {
        if (!eventsBuilding(e)) throw e;
        if (this.state.state !== 'building') this.set({ state: 'building', fraction: Number(/(\d+)%/.exec((e as Error).message)?.[1] ?? 0) / 100, phase: 'indexing the events', seconds: 0 });
        await this.ready;
        if (stale()) throw new SupersededError('a newer window of events was asked for while the events were built');
      }
    }
  }

  /** `api` with its requests for events held while the events are built; `eventsWatch` is this watch. */
  wrap(api: IndexApi): IndexApi {
    this.raw = api;
    return (this.wrapped = {
      ...api,
      events: (from, to) => this.held(() => api.events(from, to)),
      detail: (event) => this.held(() => api.detail(event)),
      next: (from, direction, cls, thread) => this.held(() => api.next(from, direction, cls, thread)),
      eventsWatch: this,
    });
  }

  /**
   * The API `wrap` made, for the chart (which shows one window of events at a time): of the windows of events it
   * asks for while they are built, only the latest is sent when they are ready; the view the others were asked for
   * has moved on.
   */
  latestWindow(): IndexApi {
    const raw = this.raw;
    const wrapped = this.wrapped;
    if (raw === null || wrapped === null) throw new Error('latestWindow: no API wrapped');
    let latest = 0;
    return {
      ...wrapped,
      events: (from, to) => {
        const mine = ++latest;
        return this.held(
          () => raw.events(from, to),
          () => mine !== latest,
        );
      },
    };
  }
}
