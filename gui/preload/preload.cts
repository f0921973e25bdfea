// The preload script: the renderer's only way to the main process. Sandboxed preloads can require nothing but 'electron', so this file stands alone; it exposes thirteen calls on fixed channels (the names of gui/main/ipc.ts's CHANNELS) and passes strings only.
import type { ContextBridgeLike, IpcRendererLike } from './preload-types.cjs';

const CHANNELS = {
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

/** The API object exposed as `window.ccMemwrap`: no Node objects, no raw ipcRenderer, no channel chosen by the page. */
function preloadApi(ipc: IpcRendererLike) {
  return Object.freeze({
    session: () => ipc.invoke(CHANNELS.session),
    traceBytes: () => ipc.invoke(CHANNELS.traceBytes),
    source: (file: unknown) => ipc.invoke(CHANNELS.source, String(file)),
    openRecent: (path: unknown) => ipc.invoke(CHANNELS.openRecent, String(path)),
    openDialog: () => ipc.invoke(CHANNELS.openDialog),
    indexStatus: () => ipc.invoke(CHANNELS.indexStatus),
    indexSummary: () => ipc.invoke(CHANNELS.indexSummary),
    indexEvents: (from: unknown, to: unknown) => ipc.invoke(CHANNELS.indexEvents, String(from), String(to)),
    indexFine: (from: unknown, to: unknown) => ipc.invoke(CHANNELS.indexFine, String(from), String(to)),
    indexDetail: (event: unknown) => ipc.invoke(CHANNELS.indexDetail, String(event)),
    indexReport: () => ipc.invoke(CHANNELS.indexReport),
    indexPanels: () => ipc.invoke(CHANNELS.indexPanels),
    indexNext: (from: unknown, direction: unknown, cls: unknown, thread: unknown) => ipc.invoke(CHANNELS.indexNext, String(from), String(direction), String(cls), String(thread)),
  });
}

function expose(electron: { contextBridge: ContextBridgeLike; ipcRenderer: IpcRendererLike }): void {
  electron.contextBridge.exposeInMainWorld('ccMemwrap', preloadApi(electron.ipcRenderer));
}

expose(require('electron') as { contextBridge: ContextBridgeLike; ipcRenderer: IpcRendererLike });
