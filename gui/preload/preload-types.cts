// Types of the two Electron objects the preload script uses (Electron itself is an optional dependency). Types only: nothing here exists at run time.
export interface IpcRendererLike {
  invoke(channel: string, ...args: string[]): Promise<unknown>;
}

export interface ContextBridgeLike {
  exposeInMainWorld(key: string, api: object): void;
}
