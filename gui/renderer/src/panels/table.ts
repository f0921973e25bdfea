// A plain table of rows with a click action per row; all cells are text. A column with a sort key sorts the rows
// listed when its header is clicked (largest first for numbers, A to Z for text; a second click reverses).
import { el, fill } from '../dom.js';

export interface Column<T> {
  label: string;
  cell: (row: T) => string;
  numeric?: boolean;
  /** Extra class for the cell, e.g. a badge. */
  cls?: (row: T) => string | null;
  /** What the column sorts by; without it the header does not sort. */
  sort?: (row: T) => number | string;
}

export function table<T>(columns: Column<T>[], rows: readonly T[], onClick: ((row: T, tr: HTMLTableRowElement) => void) | null, empty = 'nothing to show'): HTMLElement {
  if (rows.length === 0) return el('p', { class: 'empty' }, empty);
  const body = el('tbody');
  const draw = (order: readonly T[]): void => {
    fill(body);
    for (const row of order) {
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
  };
  const heads = columns.map((c) => el('th', { class: [c.numeric ? 'num' : '', c.sort ? 'sortable' : ''].join(' ').trim() }, c.label));
  columns.forEach((c, i) => {
    const key = c.sort;
    if (!key) return;
    const th = heads[i]!;
    th.title = 'sort the rows listed by this column (again: the other way round)';
    th.addEventListener('click', () => {
      // Numbers largest first, text A to Z; the same column again reverses.
      const first = c.numeric ? 'descending' : 'ascending';
      const way = th.getAttribute('aria-sort') !== first ? first : first === 'descending' ? 'ascending' : 'descending';
      const sign = way === 'descending' ? -1 : 1;
      const order = [...rows].sort((a, b) => {
        const x = key(a);
        const y = key(b);
        return sign * (x < y ? -1 : x > y ? 1 : 0);
      });
      for (const h of heads) h.removeAttribute('aria-sort');
      th.setAttribute('aria-sort', way);
      draw(order);
    });
  });
  draw(rows);
  return el('table', { class: 'rows' }, el('thead', {}, el('tr', {}, ...heads)), body);
}
