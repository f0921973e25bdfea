// Export of the current chart: an SVG built from the same layout as the canvas (one path per series, or one rect per visible bar when zoomed in, never one element per event of the trace) with the axes, and a PNG rendered from that SVG.
import { eventClassOfKind } from '../../../../analysis/event-detail.js';
import type { Chart } from './chart.js';
import { MARGIN } from './chart.js';
import { CLASS_COLOURS, MARK_COLOURS, SERIES_COLOURS } from './palette.js';

const SVG_NS = 'http://www.w3.org/2000/svg';

function svgEl(tag: string, attrs: Record<string, string | number>): SVGElement {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  return node;
}

/** A path of 1-px columns between `top(c)` and `bottom(c)`, as one element. */
function columnsPath(width: number, top: (c: number) => number, bottom: (c: number) => number): string {
  const parts: string[] = [];
  for (let c = 0; c < width; c++) {
    const a = top(c);
    const b = bottom(c);
    if (b - a >= 0.5) parts.push(`M${c} ${a.toFixed(1)}h1V${b.toFixed(1)}h-1Z`);
  }
  return parts.join('');
}

/** The chart as a standalone SVG document (text). `title` is escaped by the serializer. */
export function chartSvg(chart: Chart, title: string): string {
  const m = chart.exportModel();
  const { width, height, axes } = chart.exportLayers();
  const root = svgEl('svg', { xmlns: SVG_NS, width, height, viewBox: `0 0 ${width} ${height}`, 'font-family': 'sans-serif', 'font-size': 10 }) as SVGSVGElement;
  const titleEl = svgEl('title', {});
  titleEl.textContent = title;
  root.append(titleEl, svgEl('rect', { x: 0, y: 0, width, height, fill: '#ffffff' }));
  // As on the canvas, bars cut by the edges of the view stay inside the plot.
  const clip = svgEl('clipPath', { id: 'plot-area' });
  clip.append(svgEl('rect', { x: 0, y: 0, width: m.plotW, height }));
  const plot = svgEl('g', { transform: `translate(${MARGIN.left},0)`, 'clip-path': 'url(#plot-area)' });
  root.append(clip, plot);
  const lay = m.layout;
  const data = m.data;
  if (lay !== null && data !== null) {
    for (const b of m.budgets) {
      const y = b.side === 'above' ? m.upper(b.bytes) : m.lower(b.bytes);
      plot.append(svgEl('line', { x1: 0, x2: m.plotW, y1: y, y2: y, stroke: MARK_COLOURS.budget, 'stroke-dasharray': '6 4' }));
    }
    if (lay.kind === 'columns') {
      const add = (colour: string, top: (c: number) => number, bottom: (c: number) => number): void => {
        plot.append(svgEl('path', { d: columnsPath(lay.width, top, bottom), fill: colour }));
      };
      add(SERIES_COLOURS.stack, (c) => m.upper(lay.aboveMax[c]!), () => m.zeroY);
      add(SERIES_COLOURS.stackMin, (c) => m.upper(lay.aboveMin[c]!), () => m.zeroY);
      add(SERIES_COLOURS.static, (c) => m.upper(lay.staticMax[c]!), () => m.zeroY);
      add(SERIES_COLOURS.heap, () => m.zeroY, (c) => m.lower(lay.heapMax[c]!));
      add(SERIES_COLOURS.heapMin, () => m.zeroY, (c) => m.lower(lay.heapMin[c]!));
    } else {
      for (const bar of lay.bars) {
        const e = bar.event;
        const fill = CLASS_COLOURS[eventClassOfKind(m.kinds[e]!)];
        const w = Math.max(1, bar.x1 - bar.x0 - 1);
        const top = m.upper(data.series.above[e]!);
        plot.append(svgEl('rect', { x: bar.x0.toFixed(1), y: top.toFixed(1), width: w.toFixed(1), height: (m.zeroY - top).toFixed(1), fill }));
        plot.append(svgEl('rect', { x: bar.x0.toFixed(1), y: m.zeroY, width: w.toFixed(1), height: (m.lower(data.series.heap[e]!) - m.zeroY).toFixed(1), fill }));
      }
    }
  }
  // The axes are d3's own SVG: numbers only, copied as they are drawn.
  for (const child of Array.from(axes.childNodes)) root.append(child.cloneNode(true));
  return new XMLSerializer().serializeToString(root);
}

/** The chart rendered to PNG through its SVG (same look, no canvas taint: the image is same-origin). */
export async function chartPng(chart: Chart, title: string): Promise<Blob> {
  const svg = chartSvg(chart, title);
  const { width, height } = chart.exportLayers();
  const url = URL.createObjectURL(new Blob([svg], { type: 'image/svg+xml' }));
  try {
    const img = new Image();
    img.src = url;
    await img.decode();
    const canvas = document.createElement('canvas');
    canvas.width = width * 2;
    canvas.height = height * 2;
    const ctx = canvas.getContext('2d')!;
    ctx.scale(2, 2);
    ctx.drawImage(img, 0, 0, width, height);
    return await new Promise<Blob>((resolve, reject) => canvas.toBlob((b) => (b ? resolve(b) : reject(new Error('PNG encoding failed'))), 'image/png'));
  } finally {
    URL.revokeObjectURL(url);
  }
}

/** Saves a blob through a download link. */
export function download(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
