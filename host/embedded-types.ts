// What a self-contained HTML report carries for the renderer, as plain JSON types shared by the writer (host/html-report.ts) and the page (gui/renderer/src/backend.ts).
import type { SessionInfo, SourceResult } from './session-types.js';

/** The id of the JSON block holding an EmbeddedSession. */
export const EMBEDDED_SESSION_ID = 'mw-session';
/** The id of the block holding the trace bytes in base64. */
export const EMBEDDED_TRACE_ID = 'mw-trace';

export interface EmbeddedSession {
  session: SessionInfo;
  /** Every source file the trace names, read (or refused) by the writer under the same checks as the viewer's host. */
  sources: Record<string, SourceResult>;
}
