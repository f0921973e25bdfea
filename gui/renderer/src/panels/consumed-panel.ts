// The consumed chart: requested heap bytes live over the run, stacked by the top allocation sites (the rest as one
// band), x in event order as the timeline's, from the streamed fold of analysis/consumed.ts (a fixed number of samples,
// whatever the trace's size). Clicking a band or its legend entry selects its site.
import { axisBottom, axisLeft, scaleLinear, schemeTableau10, select } from 'd3';
import type { Consumed } from '../../../../analysis/consumed.js';
import { formatBytesFine } from '../../../../analysis/units.js';
import { el, pageZoom } from '../dom.js';
import { MARGIN } from '../chart/chart.js';
import { byteTicks } from '../chart/columns.js';

const SVG = 'http://www.w3.org/2000/svg';
/** The chart's height at 100 % (it grows with the page's zoom, as its text does). */
const HEIGHT = 220;
export const OTHER_SITES = 'every other site';
const OTHER_COLOUR = '#ced4da';

interface ConsumedBand {
  /** The site's key ("site:<id>", "interposed:<entry site>"), null for the other sites' band. */
  key: string | null;
  label: string;
}

export function consumedPanel(c: Consumed | string, label: (key: string) => string, width: number, pick: (key: string) => void): HTMLElement {
  if (typeof c === 'string') return el('p', { class: 'empty' }, `No consumed chart: ${c}`);
  if (c.ends.length === 0) return el('p', { class: 'empty' }, 'no events');
  const bands: ConsumedBand[] = [...c.sites.map((s) => ({ key: s.key, label: label(s.key) })), { key: null, label: OTHER_SITES }];
  const n = bands.length;
  const colourOf = (k: number): string => (bands[k]!.key === null ? OTHER_COLOUR : schemeTableau10[k % schemeTableau10.length]!);
  // Cumulative tops, the largest site at the bottom.
  const tops = new Float64Array(c.bytes.length);
  let most = 0;
  let rest = false;
  for (let b = 0; b < c.ends.length; b++) {
    let sum = 0;
    for (let k = 0; k < n; k++) tops[b * n + k] = sum += c.bytes[b * n + k]!;
    most = Math.max(most, sum);
    rest ||= c.bytes[b * n + n - 1]! > 0;
  }
  const height = Math.round(HEIGHT * pageZoom());
  const x = scaleLinear().domain([0, c.events]).range([MARGIN.left, width - MARGIN.right]);
  // Byte ticks as the timeline's heap axis has them (2,048 B, 4,096 B …).
  const ticks = byteTicks(most, 4);
  const y = scaleLinear().domain([0, Math.max(1, ticks.at(-1) ?? 1)]).range([height - MARGIN.bottom, MARGIN.top]);
  const pic = document.createElementNS(SVG, 'svg');
  pic.setAttribute('class', 'consumed-chart');
  pic.setAttribute('width', String(width));
  pic.setAttribute('height', String(height));
  for (let k = n - 1; k >= 0; k--) {
    // A bucket's columns as the timeline's: event e spans [e, e + 1), the sample after its last event across it.
    const upper: string[] = [];
    const lower: string[] = [];
    for (let b = 0; b < c.ends.length; b++) {
      const x0 = x(b === 0 ? 0 : c.ends[b - 1]! + 1);
      const x1 = x(c.ends[b]! + 1);
      const hi = y(tops[b * n + k]!);
      const lo = y(k === 0 ? 0 : tops[b * n + k - 1]!);
      upper.push(`${x0},${hi}`, `${x1},${hi}`);
      lower.push(`${x0},${lo}`, `${x1},${lo}`);
    }
    const path = document.createElementNS(SVG, 'polygon');
    path.setAttribute('points', [...upper, ...lower.reverse()].join(' '));
    path.setAttribute('fill', colourOf(k));
    path.setAttribute('class', 'band');
    const tip = document.createElementNS(SVG, 'title');
    const maxBytes = k < c.sites.length ? c.sites[k]!.maxBytes : null;
    tip.textContent = `${bands[k]!.label}${maxBytes === null ? '' : `\nat most ${formatBytesFine(maxBytes)} live`}`;
    path.append(tip);
    const key = bands[k]!.key;
    if (key !== null) path.addEventListener('click', () => pick(key));
    pic.append(path);
  }
  const axes = select(pic);
  axes.append('g').attr('transform', `translate(0,${height - MARGIN.bottom})`).call(axisBottom(x).ticks(Math.max(2, Math.floor(width / 120))).tickFormat((v) => Number(v).toLocaleString('en-US')));
  axes.append('g').attr('transform', `translate(${MARGIN.left},0)`).call(axisLeft(y).tickValues(ticks).tickFormat((v) => formatBytesFine(Number(v))));
  const legend = el(
    'ol',
    { class: 'consumed-legend' },
    ...bands.map((band, k) => {
      const swatch = el('span', { class: 'swatch' });
      swatch.style.background = colourOf(k);
      const maxBytes = k < c.sites.length ? ` (at most ${formatBytesFine(c.sites[k]!.maxBytes)})` : '';
      if (band.key === null) return rest ? el('li', { 'data-role': 'consumed-other' }, swatch, band.label) : null;
      const b = el('button', { type: 'button', class: 'link', 'data-role': 'consumed-site' }, band.label);
      b.addEventListener('click', () => pick(band.key!));
      return el('li', {}, swatch, b, maxBytes);
    }),
  );
  return el(
    'div',
    { class: 'consumed' },
    el('p', { class: 'hint' }, `Heap bytes live (requested) over the run, x in event order (the timeline's "events in order" axis); the ${c.sites.length} sites holding the most at once, largest at the bottom, then ${OTHER_SITES}. Sampled after ${c.ends.length.toLocaleString('en-US')} events evenly spread. Click a band to select its site.`),
    pic,
    legend,
  );
}
