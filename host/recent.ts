// The recent-traces list of the viewer: absolute paths, newest first, at most RECENT_MAX, kept in one JSON file; entries whose file is gone are dropped when read.
import { existsSync, readFileSync } from 'node:fs';
import { makePrivateDir, writePrivateFile } from './private-files.js';
import os from 'node:os';
import path from 'node:path';
import type { RecentEntry } from './session-types.js';

export const RECENT_MAX = 10;

export type { RecentEntry };

/** ~/.cache/cc-memwrap/recent-traces.json, or under MEMWRAP_CACHE_DIR. */
export function defaultRecentFile(env: NodeJS.ProcessEnv = process.env): string {
  const dir = env.MEMWRAP_CACHE_DIR || path.join(env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'cc-memwrap');
  return path.join(dir, 'recent-traces.json');
}

export class RecentList {
  constructor(readonly file: string) {}

  /** The list as stored, without entries that are not strings or whose file no longer exists. */
  read(): RecentEntry[] {
    let raw: unknown;
    try {
      raw = JSON.parse(readFileSync(this.file, 'utf8'));
    } catch {
      return [];
    }
    if (!Array.isArray(raw)) return [];
    return raw
      .filter((p): p is string => typeof p === 'string' && path.isAbsolute(p) && existsSync(p))
      .slice(0, RECENT_MAX)
      .map((p) => ({ path: p, name: path.basename(p) }));
  }

  /** Puts `tracePath` first; failures to write are ignored (a read-only home must not stop the viewer). */
  add(tracePath: string): RecentEntry[] {
    const abs = path.resolve(tracePath);
    const list = [abs, ...this.read().map((e) => e.path).filter((p) => p !== abs)].slice(0, RECENT_MAX);
    try {
      makePrivateDir(path.dirname(this.file));
      writePrivateFile(this.file, JSON.stringify(list, null, 1) + '\n');
    } catch {
      // keep going without a stored list
    }
    return list.map((p) => ({ path: p, name: path.basename(p) }));
  }

  /** Whether `p` is on the list: the only traces a host opens on the renderer's request. */
  has(p: string): boolean {
    return this.read().some((e) => e.path === p);
  }
}
