// A plain table of rows with a click action per row; all cells are text.
import { el } from '../dom.js';

export interface Column<T> {
  label: string;
  cell: (row: T) => string;
  numeric?: boolean;
  /** Extra class for the cell, e.g. a badge. */
  cls?: (row: T) => string | null;
}

export function table<T>(columns: Column<T>[], rows: readonly T[], onClick: ((row: T, tr: HTMLTableRowElement) => void) | null, empty = 'nothing to show'): HTMLElement {
  if (rows.length === 0) return el('p', { class: 'empty' }, empty);
  const head = el('tr', {}, ...columns.map((c) => el('th', c.numeric ? { class: 'num' } : {}, c.label)));
  const body = el('tbody');
  for (const row of rows) {
    const tr = el('tr', onClick ? { class: 'clickable', tabindex: '0' } : {});
    for (const c of columns) {
      const extra = c.cls?.(row) ?? null;
      tr.append(el('td', { class: [c.numeric ? 'num' : '', extra ?? ''].join(' ').trim() }, c.cell(row)));
    }
    if (onClick) {
      tr.addEventListener('click', () => onClick(row, tr));
      tr.addEventListener('keydown', (e) => {
        if (e.key === 'Enter') onClick(row, tr);
      });
    }
    body.append(tr);
  }
  return el('table', { class: 'rows' }, el('thead', {}, head), body);
}
