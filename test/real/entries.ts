// Which functions a trace entered, by source file: read with the trace
// reader's record walk (no model is built, so a trace of tens of millions of
// records stays cheap), from its UNIT site tables and ENTER records. A build
// whose units all fell back to plain compilation still links the runtime and
// records its heap, but enters no function of its own sources.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ProblemLog } from '../../analysis/problems.js';
import { Kind, SiteKind } from '../../analysis/trace/format.js';
import { parseHeader } from '../../analysis/trace/header.js';
import { walkRecords } from '../../analysis/trace/records.js';

export interface FunctionEntries {
  /** UNIT records: the instrumented translation units that registered their sites. */
  units: number;
  /** Source file (absolute, normalised) → function → times entered. */
  byFile: Map<string, Map<string, number>>;
}

export function functionEntries(trace: string): FunctionEntries {
  const bytes = new Uint8Array(readFileSync(trace));
  const entrySites = new Map<number, { file: string; name: string }>();
  const entered = new Map<number, number>();
  let units = 0;
  walkRecords(
    bytes,
    parseHeader(bytes),
    {
      record(r) {
        if (r.kind === Kind.ENTER) entered.set(r.site, (entered.get(r.site) ?? 0) + 1);
        else if (r.kind === Kind.UNIT && r.unit !== null) {
          units++;
          const u = r.unit;
          u.kind.forEach((kind, i) => {
            if (kind === SiteKind.ENTRY) entrySites.set(u.base + i, { file: path.resolve(u.strings[u.file[i]!] ?? '?'), name: u.strings[u.name[i]!] ?? '?' });
          });
        }
      },
    },
    new ProblemLog(),
  );
  const byFile = new Map<string, Map<string, number>>();
  for (const [site, times] of entered) {
    const where = entrySites.get(site);
    if (!where) continue;
    const functions = byFile.get(where.file) ?? new Map<string, number>();
    functions.set(where.name, (functions.get(where.name) ?? 0) + times);
    byFile.set(where.file, functions);
  }
  return { units, byFile };
}

/** Distinct functions entered whose source lies inside `tree`, as `file:function`. */
export function ownFunctionsEntered(entries: FunctionEntries, tree: string): string[] {
  const root = path.resolve(tree) + path.sep;
  const own: string[] = [];
  for (const [file, functions] of entries.byFile) {
    if (!file.startsWith(root)) continue;
    for (const name of functions.keys()) own.push(`${file.slice(root.length)}:${name}`);
  }
  return own.sort();
}
