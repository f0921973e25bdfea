// What the main process answers the preload's calls with: the open trace's facts and bytes (or, for a trace opened through its index, what host/index-api.ts answers), the source files it names (through the same checks as the local server), the recent list and a file dialog. Arguments from the renderer are untrusted: anything but a string is refused.
import type { RecentList } from '../../host/recent.js';
import type { SourceResult } from '../../host/source-access.js';
import type { SessionReply } from '../../host/session-types.js';
import { TraceOpenError, TraceSession, type SessionOptions } from '../../host/trace-session.js';
import type { OpenDialogResult } from './electron-api.js';
import { indexDetail, indexEvents, indexFine, indexNext, indexPanelsText, indexReportText, indexStatus, indexSummary } from '../../host/index-api.js';

/** Channel names; the preload script (gui/preload/preload.cts) uses the same strings. */
export const CHANNELS = {
  session: 'cc-memwrap:session',
  traceBytes: 'cc-memwrap:trace-bytes',
  source: 'cc-memwrap:source',
  openRecent: 'cc-memwrap:open-recent',
  openDialog: 'cc-memwrap:open-dialog',
  indexStatus: 'cc-memwrap:index-status',
  indexSummary: 'cc-memwrap:index-summary',
  indexEvents: 'cc-memwrap:index-events',
  indexFine: 'cc-memwrap:index-fine',
  indexDetail: 'cc-memwrap:index-detail',
  indexNext: 'cc-memwrap:index-next',
  indexReport: 'cc-memwrap:index-report',
  indexPanels: 'cc-memwrap:index-panels',
} as const;


export interface HostState {
  session: TraceSession | null;
}

export interface HandlerDeps {
  state: HostState;
  recent: RecentList;
  options: SessionOptions;
  showOpenDialog: () => Promise<OpenDialogResult>;
}

export type Handlers = {
  [K in keyof typeof CHANNELS]: (...args: unknown[]) => Promise<unknown>;
};

function str(v: unknown, what: string): string {
  if (typeof v !== 'string') throw new TypeError(`${what} must be a string`);
  return v;
}

export function createHandlers(deps: HandlerDeps): Handlers {
  const { state, recent } = deps;
  const reply = (): SessionReply | null => (state.session ? { ...state.session.info, recent: recent.read() } : null);
  const open = async (p: string): Promise<SessionReply | null> => {
    try {
      state.session = await TraceSession.open(p, deps.options);
    } catch (e) {
      throw new Error(e instanceof TraceOpenError ? e.message : String(e));
    }
    recent.add(state.session.path);
    return reply();
  };
  const indexed = (): TraceSession => {
    if (!state.session) throw new Error('no trace is open');
    if (state.session.info.mode !== 'index') throw new Error(`${state.session.info.trace.name} is not opened through an index`);
    return state.session;
  };
  return {
    session: async () => reply(),
    indexStatus: async () => indexStatus(indexed()),
    indexSummary: async () => indexSummary(indexed()),
    indexEvents: async (from: unknown, to: unknown) => indexEvents(indexed(), from, to),
    indexFine: async (from: unknown, to: unknown) => indexFine(indexed(), from, to),
    indexDetail: async (event: unknown) => indexDetail(indexed(), event),
    indexNext: async (from: unknown, direction: unknown, cls: unknown, thread: unknown) => indexNext(indexed(), from, direction, cls, thread),
    indexReport: async () => indexReportText(indexed()),
    indexPanels: async () => indexPanelsText(indexed()),
    traceBytes: async () => {
      if (!state.session) throw new Error('no trace is open');
      return state.session.bytes;
    },
    source: async (file: unknown): Promise<SourceResult> => {
      const f = str(file, 'file');
      if (!state.session) return { ok: false, file: f, reason: 'not-named', message: `${f}: no trace is open` };
      return state.session.source(f);
    },
    openRecent: async (p: unknown) => {
      const path = str(p, 'path');
      if (!recent.has(path)) throw new Error(`${path}: not on the recent list`);
      return open(path);
    },
    openDialog: async () => {
      const r = await deps.showOpenDialog();
      if (r.canceled || r.filePaths.length === 0) return null;
      return open(r.filePaths[0]!);
    },
  };
}
