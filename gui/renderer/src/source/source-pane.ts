// The source pane: one file at a time with C highlighting, the selected line marked and scrolled to, other lines of interest (an allocation a free released, linked blocks) marked too; says plainly when a file cannot be shown; can read sources from a folder the user picks (a moved tree).
import type { Backend, SourceResult } from '../backend.js';
import { el, fill } from '../dom.js';
import { highlightC } from './highlight-c.js';

export interface SourceMark {
  line: number;
  /** 'orphaned': a block a free left unreachable, marked apart from the blocks it released or still reaches. */
  kind: 'selected' | 'related' | 'orphaned';
  /** Shown at the line's end, e.g. "allocated here". */
  note?: string;
}

/** Which kind a line with several marks shows, strongest first. */
const MARK_STRENGTH: ReadonlyArray<SourceMark['kind']> = ['selected', 'orphaned', 'related'];

export class SourcePane {
  private cache = new Map<string, Promise<SourceResult>>();
  /** Files of a folder the user chose, by their path inside it. */
  private picked: Map<string, File> | null = null;
  private current: { file: string; marks: SourceMark[] } | null = null;

  constructor(
    /** Where the trace's sources come from (the page's backend, or one run's of the compare page), null: none. */
    private readonly backend: () => Pick<Backend, 'source'> | null,
    private readonly head: HTMLElement,
    private readonly body: HTMLElement,
  ) {}

  /** Sources from a folder the user picked: a trace path is matched by its longest tail that names a picked file. */
  useFolder(files: FileList): void {
    this.picked = new Map();
    for (const f of Array.from(files)) {
      const rel = (f as File & { webkitRelativePath?: string }).webkitRelativePath || f.name;
      this.picked.set(rel.split('/').slice(1).join('/') || rel, f);
    }
    this.cache.clear();
    if (this.current) void this.show(this.current.file, this.current.marks);
  }

  reset(): void {
    this.cache.clear();
    this.current = null;
    fill(this.head, 'Source');
    fill(this.body);
  }

  private async fromPicked(file: string): Promise<SourceResult | null> {
    if (this.picked === null) return null;
    const parts = file.split('/').filter((p) => p !== '' && p !== '.' && p !== '..');
    for (let i = 0; i < parts.length; i++) {
      const f = this.picked.get(parts.slice(i).join('/'));
      if (f) return { ok: true, file, path: `${parts.slice(i).join('/')} (chosen folder)`, text: await f.text() };
    }
    return { ok: false, file, reason: 'missing', message: `${file}: not in the chosen folder` };
  }

  private load(file: string): Promise<SourceResult> {
    let p = this.cache.get(file);
    if (!p) {
      p = (async (): Promise<SourceResult> => {
        const picked = await this.fromPicked(file);
        if (picked) return picked;
        const backend = this.backend();
        if (!backend) return { ok: false, file, reason: 'missing', message: `${file}: no source available for a trace opened from this page; choose its source folder` };
        try {
          return await backend.source(file);
        } catch (e) {
          return { ok: false, file, reason: 'unreadable', message: `${file}: ${(e as Error).message}` };
        }
      })();
      this.cache.set(file, p);
    }
    return p;
  }

  /** Opens `file` with `marks`; the first 'selected' mark is scrolled into view. No file: says why, in `why`'s words. */
  async show(file: string | null, marks: SourceMark[], why = 'This has no source location.'): Promise<void> {
    if (file === null) {
      this.current = null;
      fill(this.head, 'Source');
      fill(this.body, el('p', { class: 'hint no-source' }, why));
      return;
    }
    this.current = { file, marks };
    const result = await this.load(file);
    if (this.current?.file !== file || this.current.marks !== marks) return; // a newer request won
    if (!result.ok) {
      fill(this.head, el('span', { class: 'path' }, file));
      fill(this.body, el('p', { class: 'missing', 'data-reason': result.reason }, `Source not shown: ${result.message}`));
      return;
    }
    fill(this.head, el('span', { class: 'path', title: result.path }, file), marks[0] ? el('span', { class: 'line-no' }, `:${marks[0].line}`) : null);
    // One line can carry several marks (a free that released one node of line 21 and orphaned another of it): every
    // note is shown; the line takes the strongest kind among them.
    const byLine = new Map<number, SourceMark[]>();
    for (const m of marks) byLine.set(m.line, [...(byLine.get(m.line) ?? []), m]);
    const table = el('div', { class: 'code' });
    const tokens = highlightC(result.text);
    let target: HTMLElement | null = null;
    tokens.forEach((line, i) => {
      const n = i + 1;
      const lineMarks = byLine.get(n) ?? [];
      const kind = MARK_STRENGTH.find((k) => lineMarks.some((m) => m.kind === k));
      const code = el('span', { class: 'text' });
      for (const t of line) code.append(t.cls === 'plain' ? document.createTextNode(t.text) : el('span', { class: `tok-${t.cls}` }, t.text));
      const notes = lineMarks.filter((m) => m.note).map((m) => el('span', { class: `note ${m.kind}` }, m.note!));
      const row = el('div', { class: `ln${kind ? ` ${kind}` : ''}`, 'data-line': String(n) }, el('span', { class: 'num' }, String(n)), code, ...notes);
      if (kind === 'selected' && target === null) target = row;
      table.append(row);
    });
    // A file served although it changed since the build (from a root the user named): said above its text.
    fill(this.body, ...(result.note ? [el('p', { class: 'source-note' }, result.note)] : []), table);
    // Scroll only the pane (scrollIntoView would scroll the page too).
    const first = target as HTMLElement | null;
    if (first) this.body.scrollTop = Math.max(0, first.offsetTop - this.body.clientHeight / 2);
  }
}
