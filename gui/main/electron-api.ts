// The slice of Electron's API the main process uses, typed here because Electron is an optional dependency (absent where its binary cannot be downloaded): the main process's logic is written against these types and tested with fakes.

export interface WebPreferences {
  preload: string;
  contextIsolation: boolean;
  nodeIntegration: boolean;
  nodeIntegrationInWorker: boolean;
  sandbox: boolean;
  webSecurity: boolean;
  allowRunningInsecureContent: boolean;
  webviewTag: boolean;
  spellcheck: boolean;
}

export interface WindowOptions {
  width: number;
  height: number;
  title: string;
  show: boolean;
  backgroundColor: string;
  webPreferences: WebPreferences;
}

export interface NavigationEvent {
  preventDefault(): void;
}

export interface WebContentsLike {
  on(event: 'will-navigate' | 'will-redirect', listener: (e: NavigationEvent, url: string) => void): void;
  setWindowOpenHandler(handler: (details: { url: string }) => { action: 'deny' | 'allow' }): void;
  session: {
    setPermissionRequestHandler(handler: (contents: unknown, permission: string, callback: (granted: boolean) => void) => void): void;
    setPermissionCheckHandler(handler: () => boolean): void;
  };
}

export interface OpenDialogResult {
  canceled: boolean;
  filePaths: string[];
}
