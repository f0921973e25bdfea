// Export of the current chart: the plot painted by the chart's own drawing routine into SVG (painter.ts; one path per series, or one rect per visible bar when zoomed in, never one element per event of the trace), with the axes, a title band (trace and range) above and the legend (keys, budgets, what the counts and the stack figure mean) below; the PNG is that SVG rendered, so the two never differ.
import { CLASS_COLOURS } from './palette.js';
import { budgetLabel, MARGIN, type BudgetMark, type Chart } from './chart.js';
import { LEGEND_KEYS, type LegendKey } from './legend.js';
import { SvgPainter, xmlEscape } from './painter.js';
import { VOCABULARY_NOTES } from '../vocabulary.js';

const SVG_NS = 'http://www.w3.org/2000/svg';
/** Height of the title band above the chart. */
export const TITLE_BAND = 44;
const LEGEND_ROW = 16;
const LEGEND_FONT = 11;
const TEXT_COLOUR = '#212529';

/** What the export's title band says: the trace (and program) on the first line, the range shown on the second. */
export interface ExportTitle {
  title: string;
  subtitle: string;
}

/** Text width estimate for laying out the legend (no DOM measuring: the export is text). */
const textWidth = (s: string, size: number): number => s.length * size * 0.56;

/** The legend below the chart: keys flowing left to right, the budgets, then the notes, wrapped to `width`. */
function legendSvg(p: SvgPainter, width: number, top: number, budgets: BudgetMark[]): number {
  const keys: LegendKey[] = LEGEND_KEYS.filter((k) => !k.screenOnly);
  const items = [...keys, ...budgets.map((b): LegendKey => ({ colour: '', label: `${budgetLabel(b)}${b.ranges.length ? `: exceeded in ${b.ranges.length} ${b.ranges.length === 1 ? 'range' : 'ranges'} (shaded)` : ': kept'}`, shape: 'line' }))];
  const style = { colour: TEXT_COLOUR, size: LEGEND_FONT };
  let x = 8;
  let y = top + LEGEND_ROW;
  for (const k of items) {
    const w = 16 + textWidth(k.label, LEGEND_FONT) + 14;
    if (x + w > width - 8 && x > 8) {
      x = 8;
      y += LEGEND_ROW;
    }
    const colour = k.colour || '#c92a2a';
    if (k.shape === 'line') p.line(x, y - 4, x + 12, y - 4, colour, 2, k.colour === '' ? [4, 2] : null);
    else if (k.shape === 'rug') {
      p.fillRect(x, y - 10, 12, 2, CLASS_COLOURS.alloc);
      p.fillRect(x, y - 6, 12, 2, CLASS_COLOURS.free);
      p.fillRect(x, y - 2, 12, 2, CLASS_COLOURS.call);
    } else p.fillRect(x, y - 10, 11, 11, colour);
    p.text(k.label, x + 16, y, style);
    x += w;
  }
  for (const note of VOCABULARY_NOTES) {
    // Notes wrap at word boundaries.
    let line = '';
    for (const word of note.split(' ')) {
      if (line !== '' && textWidth(`${line} ${word}`, LEGEND_FONT) > width - 16) {
        y += LEGEND_ROW;
        p.text(line, 8, y, style);
        line = word;
      } else line = line === '' ? word : `${line} ${word}`;
    }
    y += LEGEND_ROW;
    p.text(line, 8, y, style);
  }
  return y + 8 - top;
}

/** The chart as a standalone SVG document (text), as the screen shows it, with title band and legend. */
export function chartSvg(chart: Chart, title: ExportTitle): string {
  const plot = new SvgPainter();
  const drawn = chart.paintExport(plot);
  const width = drawn?.width ?? 600;
  const height = drawn?.height ?? 200;
  const head = new SvgPainter();
  head.text(title.title, 8, 18, { colour: TEXT_COLOUR, size: 15, bold: true });
  head.text(title.subtitle, 8, 36, { colour: '#495057', size: 12 });
  const legend = new SvgPainter();
  const legendH = legendSvg(legend, width, TITLE_BAND + height, chart.budgets);
  const total = TITLE_BAND + height + legendH;
  // The axes are d3's own SVG: numbers and labels, copied as they are drawn.
  const axes = drawn ? Array.from(drawn.axes.childNodes, (c) => new XMLSerializer().serializeToString(c)).join('') : '';
  return [
    `<svg xmlns="${SVG_NS}" width="${width}" height="${total}" viewBox="0 0 ${width} ${total}" font-family="sans-serif" font-size="10">`,
    `<title>${xmlEscape(title.title)}</title>`,
    // What the page's style sheet gives the axes' own elements.
    `<style>.zero{stroke:#495057}.side-label{fill:#868e96;font-size:10px}</style>`,
    `<rect x="0" y="0" width="${width}" height="${total}" fill="#ffffff"/>`,
    head.parts.join(''),
    `<g transform="translate(0,${TITLE_BAND})">`,
    // As on the canvas, bars cut by the edges of the view stay inside the plot.
    `<clipPath id="plot-area"><rect x="0" y="0" width="${drawn?.plotW ?? 0}" height="${height}"/></clipPath>`,
    `<g class="plot" transform="translate(${MARGIN.left},0)" clip-path="url(#plot-area)">${plot.parts.join('')}</g>`,
    `<g class="axes">${axes}</g>`,
    '</g>',
    `<g class="legend">${legend.parts.join('')}</g>`,
    '</svg>',
  ].join('');
}

/** The chart rendered to PNG through its SVG (same look, no canvas taint: the image is same-origin). */
export async function chartPng(chart: Chart, title: ExportTitle): Promise<Blob> {
  const svg = chartSvg(chart, title);
  const [, w, h] = /width="(\d+(?:\.\d+)?)" height="(\d+(?:\.\d+)?)"/.exec(svg)!;
  const width = Number(w);
  const height = Number(h);
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
