// Projector mode: the zoom control scales every text of the page and the charts' axes (100–200 %, Ctrl+= / Ctrl+- /
// Ctrl+0), and the bar between the chart and the panes below sets the chart's height (drag it, or focus it and use
// the arrow keys). Both are remembered in the browser's storage between loads. From 150 % on, room is short: the
// page is marked `projector` (the toolbar's file controls go into its ⋯ menu, the legend folds to the kinds of event).
import type { Chart } from './chart/chart.js';
import { fitLegend } from './chart/legend.js';
import { byId } from './dom.js';

const ZOOM_KEY = 'cc-memwrap.zoom';
const CHART_HEIGHT_KEY = 'cc-memwrap.chart-height';
/** Arrow keys on the bar move it by this much. */
const KEY_STEP_PX = 24;
/** Least height of the chart area, and of what stays below it (the bar, the panes' and the panels' least heights, the padding). */
const MIN_CHART_PX = 160;
const MIN_BELOW_PX = 250;
/** What stays below the chart is at most this share of the window's height (at 200 %, 500 px would leave no chart). */
const MAX_BELOW_SHARE = 0.35;
/** The zoom from which the page is in projector mode. */
const PROJECTOR_ZOOM = 1.5;

function remembered(key: string): number | null {
  try {
    const v = Number(localStorage.getItem(key));
    return Number.isFinite(v) && v > 0 ? v : null;
  } catch {
    return null; // storage refused (a sandboxed frame): nothing is remembered
  }
}

function remember(key: string, value: number): void {
  try {
    localStorage.setItem(key, String(value));
  } catch {
    // as above
  }
}

/**
 * The zoom control (`#zoom`) and its keys for the charts of a page: every text through the CSS variable `--zoom`, each
 * chart's axes, the projector mode's marks. Returns the zoom set (remembered, or 100 %).
 */
export function setupZoom(charts: readonly Chart[]): () => number {
  const select = byId<HTMLSelectElement>('zoom');
  const steps = [...select.options].map((o) => Number(o.value));
  const zoomTo = (z: number): void => {
    const value = steps.includes(z) ? z : 1;
    select.value = String(value);
    document.documentElement.style.setProperty('--zoom', String(value));
    document.documentElement.classList.toggle('projector', value >= PROJECTOR_ZOOM);
    for (const legend of document.querySelectorAll<HTMLElement>('.legend')) fitLegend(legend, value >= PROJECTOR_ZOOM);
    for (const chart of charts) chart.setTextScale(value);
    remember(ZOOM_KEY, value);
    // The selected source line moved with the text: back to the middle of its pane (the pane alone scrolls).
    const line = document.querySelector<HTMLElement>('#source-body .ln.selected');
    const pane = document.getElementById('source-body');
    if (line && pane) pane.scrollTop = Math.max(0, line.offsetTop - pane.clientHeight / 2);
  };
  const step = (by: 1 | -1): void => zoomTo(steps[Math.max(0, Math.min(steps.length - 1, steps.indexOf(Number(select.value)) + by))]!);
  select.addEventListener('change', () => zoomTo(Number(select.value)));
  document.addEventListener('keydown', (e) => {
    if (!(e.ctrlKey || e.metaKey) || e.altKey) return;
    const act = e.key === '=' || e.key === '+' ? () => step(1) : e.key === '-' ? () => step(-1) : e.key === '0' ? () => zoomTo(1) : null;
    if (act === null) return;
    e.preventDefault();
    act();
  });
  zoomTo(remembered(ZOOM_KEY) ?? 1);
  return () => Number(select.value);
}

/** The toolbar's ⋯ button: in projector mode it opens the file controls (open, recent, export, source folder) under it. */
function setupFileMenu(): void {
  const more = byId<HTMLButtonElement>('more');
  const menu = byId('file-controls');
  const open = (yes: boolean): void => {
    menu.classList.toggle('open', yes);
    more.setAttribute('aria-expanded', String(yes));
  };
  more.addEventListener('click', () => open(!menu.classList.contains('open')));
  // A control used, a click elsewhere or Escape closes it.
  menu.addEventListener('change', () => open(false));
  menu.addEventListener('click', (e) => (e.target as HTMLElement).tagName === 'BUTTON' && open(false));
  document.addEventListener('pointerdown', (e) => {
    const t = e.target as Node;
    if (!menu.contains(t) && !more.contains(t)) open(false);
  });
  document.addEventListener('keydown', (e) => e.key === 'Escape' && open(false));
}

export function setupProjector(chart: Chart): void {
  const zoom = setupZoom([chart]);
  setupFileMenu();

  // The chart area's height, set by the bar under it.
  const layout = byId('layout');
  const area = byId('chart-area');
  const bar = byId('split');
  const setHeight = (px: number, save: boolean): void => {
    const below = Math.min(MIN_BELOW_PX * zoom(), window.innerHeight * MAX_BELOW_SHARE);
    const max = Math.max(MIN_CHART_PX, layout.clientHeight - below);
    const h = Math.round(Math.max(MIN_CHART_PX, Math.min(max, px)));
    layout.style.setProperty('--chart-height', `${h}px`);
    bar.setAttribute('aria-valuenow', String(h));
    if (save) remember(CHART_HEIGHT_KEY, h);
  };
  const saved = remembered(CHART_HEIGHT_KEY);
  if (saved !== null) setHeight(saved, false);
  // A smaller window: the chart gives way, so the panes below keep their least height.
  window.addEventListener('resize', () => {
    if (layout.style.getPropertyValue('--chart-height') !== '') setHeight(area.getBoundingClientRect().height, false);
  });
  bar.addEventListener('pointerdown', (e) => {
    e.preventDefault();
    bar.setPointerCapture(e.pointerId);
    // The chart's height follows the pointer from where it took the bar: no jump at the first move.
    const start = area.getBoundingClientRect().height - e.clientY;
    const move = (m: PointerEvent): void => setHeight(start + m.clientY, false);
    const up = (u: PointerEvent): void => {
      setHeight(start + u.clientY, true);
      bar.removeEventListener('pointermove', move);
      bar.removeEventListener('pointerup', up);
    };
    bar.addEventListener('pointermove', move);
    bar.addEventListener('pointerup', up);
  });
  bar.addEventListener('keydown', (e) => {
    const by = e.key === 'ArrowUp' ? -KEY_STEP_PX : e.key === 'ArrowDown' ? KEY_STEP_PX : 0;
    if (by === 0) return;
    e.preventDefault();
    e.stopPropagation(); // not the page's arrow keys (the previous / next event)
    setHeight(area.getBoundingClientRect().height + by, true);
  });
}
