// Reading the site table: file, line, function and name of a site id, and the labels reports show for them.
import type { SiteTable } from './model.js';
import { siteKindName } from './trace/format.js';

export interface SiteInfo {
  kind: number;
  file: string | null;
  line: number;
  /** Enclosing function ("" at file scope). */
  func: string | null;
  /** Function / object / allocator name. */
  name: string | null;
}

/** The site's fields, or null for 0 and ids no UNIT defines. */
export function siteInfo(model: { sites: SiteTable }, id: number): SiteInfo | null {
  const s = model.sites;
  if (id <= 0 || id >= s.count || s.kind[id] === 0) return null;
  const str = (i: number): string | null => s.strings[i] ?? null;
  return { kind: s.kind[id]!, file: str(s.file[id]!), line: s.line[id]!, func: str(s.func[id]!), name: str(s.name[id]!) };
}

/** "demo.c:12", or "?" parts for missing strings. Site tables hold absolute
 *  paths; under `relativeTo` (the run's working directory) they are shown
 *  relative to it, as the user typed them. */
export function siteLocation(info: SiteInfo, relativeTo?: string | null): string {
  let file = info.file ?? '?';
  if (relativeTo) {
    const dir = relativeTo.endsWith('/') ? relativeTo : relativeTo + '/';
    if (file.startsWith(dir)) file = file.slice(dir.length);
  }
  return `${file}:${info.line}`;
}

/** The allocator a site calls: its recorded name, else its kind's name. */
export function allocatorName(info: SiteInfo | null): string | null {
  return info?.name || (info ? siteKindName(info.kind) : null);
}

/** "list.c:31 main → malloc" for an allocation or free site. */
export function allocationSiteLabel(info: SiteInfo | null, site: number, relativeTo?: string | null): string {
  if (info === null) return `<unknown site ${site}>`;
  return `${siteLocation(info, relativeTo)} ${info.func || '<file scope>'} → ${allocatorName(info)}`;
}

/** The function a heap call seen only by the interposed allocator is charged
 *  to, from its frame's entry site (null: no instrumented frame was open). */
export function interposedFunction(info: SiteInfo | null): string {
  return info === null ? '<no instrumented frame>' : info.name || info.func || '?';
}

/** "main (via libc/uninstrumented)". */
export function interposedLabel(info: SiteInfo | null): string {
  return `${interposedFunction(info)} (via libc/uninstrumented)`;
}
