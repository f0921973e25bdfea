// The chart: canvas bars (stack and static above the axis, heap below) with level of detail, d3 scales and axes, wheel/drag zoom and pan, an overview strip with a brush, tooltips, budget lines and exceeded ranges, and marks for the selected event, its related events and highlighted sets.
import { axisBottom, axisLeft, brushX, scaleLinear, select, tickStep, zoom, zoomIdentity, type D3BrushEvent, type D3ZoomEvent, type ScaleLinear, type ZoomBehavior, type ZoomTransform } from 'd3';
import { EVENT_CLASSES, eventClassOfKind } from '../../../../analysis/event-detail.js';
import { formatBytesFine } from '../../../../analysis/units.js';
import { anyIn, byteTicks, layout, MIN_BAR_PX, positionOf, eventAt, representative, type Bars, type ChartData, type Columns, type XMode } from './columns.js';
import { CLASS_COLOURS, MARK_COLOURS, SERIES_COLOURS } from './palette.js';
import { CanvasPainter, type Painter, type TextStyle } from './painter.js';
import { STACK_MEASURE } from '../vocabulary.js';

/** A frame's values (Chart.drawn): per column (its first event, extremes and classes) or per bar (its event and values). */
export interface DrawnValues {
  kind: 'columns' | 'bars';
  events: number[];
  end?: number[];
  aboveMin?: number[];
  above: number[];
  heapMin?: number[];
  heap: number[];
  static: number[];
  masks: number[];
}

export const MARGIN = { left: 72, right: 12, top: 8, bottom: 22 };
/** The margins at 100 %; `Chart.setTextScale` widens them for larger axis labels (projector mode). */
const BASE_MARGIN = { ...MARGIN };
/** Share of the plot height above the axis (stack and static). */
const UPPER_SHARE = 0.4;
/** Height of the class rug under the plot: one 3 px row per class. */
const RUG_ROW = 3;
const BUDGET_DASH = [6, 4] as const;
const MARK_DASH = [4, 3] as const;
const BUDGET_TEXT: TextStyle = { colour: MARK_COLOURS.budget, size: 11 };
/**
 * A budget stretches its byte axis to show its line when it is at most this many times the largest value the axis
 * would fit without it; one further off is a marker at the axis's edge, so it never flattens what the run drew.
 */
const BUDGET_REACH = 2;
/** The white behind a label drawn over bars, so that it stays readable. */
const LABEL_BACK = 'rgba(255, 255, 255, 0.88)';

export interface BudgetMark {
  label: string;
  side: 'above' | 'heap';
  bytes: number;
  /** Event ranges [start, end] where it is exceeded. */
  ranges: Array<[number, number]>;
  /** false: a heap or total budget that leaves out the blocks libraries made (its shading is then the ranges found). */
  library?: boolean;
}

/** A label the canvas drew, in client coordinates (for tests: labels must not overlap). */
export interface LabelBox {
  text: string;
  left: number;
  top: number;
  width: number;
  height: number;
}

/** A budget as the last frame drew it: its line's y (client), or null when off the axis (a marker at its edge); its shaded spans (plot x). */
export interface DrawnBudget {
  label: string;
  lineY: number | null;
  shaded: Array<[number, number]>;
}

export interface ChartMarks {
  selected: number | null;
  /** Events related to the selection (an allocation's free, a free's allocation, linked blocks' allocations). */
  related: Int32Array;
  /** Allocations of the blocks the selected free orphaned (drawn in a colour of their own). */
  orphaned: Int32Array;
  /** Events of a table row or search (sorted). */
  highlight: Int32Array;
}

interface Geometry {
  width: number;
  height: number;
  plotW: number;
  plotH: number;
  zeroY: number;
  upperH: number;
  lowerH: number;
}

export class Chart {
  private data: ChartData | null = null;
  private mode: XMode = 'events';
  private kinds: Uint8Array = new Uint8Array(0);
  /** The overview strip's last layout (drawn). */
  private lastOverview: Columns | Bars | null = null;
  private transform: ZoomTransform = zoomIdentity;
  private base: ScaleLinear<number, number> = scaleLinear();
  private upper: ScaleLinear<number, number> = scaleLinear();
  private lower: ScaleLinear<number, number> = scaleLinear();
  private upperTicks: number[] = [0, 1];
  private lowerTicks: number[] = [0, 1];
  /** The whole run's largest values above and below the axis (budgets included): the unzoomed view and the overview strip. */
  private fullUp = 1;
  private fullDown = 1;
  private geo: Geometry = { width: 0, height: 0, plotW: 0, plotH: 0, zeroY: 0, upperH: 0, lowerH: 0 };
  private readonly canvas: HTMLCanvasElement;
  private readonly axes: SVGSVGElement;
  private readonly ovCanvas: HTMLCanvasElement;
  private readonly ovSvg: SVGSVGElement;
  private readonly ovBrush: SVGGElement;
  private readonly zoomer: ZoomBehavior<HTMLCanvasElement, unknown>;
  private readonly brusher = brushX<unknown>();
  private pending = 0;
  private syncingBrush = false;
  private lastLayout: Columns | Bars | null = null;
  private xAxis: SVGGElement | null = null;
  private readonly screen = new CanvasPainter();
  private readonly ovScreen = new CanvasPainter();
  /** The labels and budgets the last frame drew on the canvas (plot coordinates), for drawnMarks(). */
  private lastLabels: Array<{ text: string; x: number; y: number; w: number; h: number }> = [];
  private lastBudgets: Array<{ label: string; y: number | null; shaded: Array<[number, number]> }> = [];
  private sideBoxes: Array<{ x: number; y: number; w: number; h: number }> | null = null;
  /** Widths of x tick labels measured at the current text size (emptied when it changes; bounded). */
  private readonly tickWidths = new Map<string, number>();
  budgets: BudgetMark[] = [];
  /** How much larger than at 100 % the text is (the page's zoom control). */
  private textScale = 1;
  marks: ChartMarks = { selected: null, related: new Int32Array(0), orphaned: new Int32Array(0), highlight: new Int32Array(0) };
  /** Milliseconds of each draw, for the benchmark and the status line. */
  readonly drawTimes: number[] = [];
  /**
   * Axes shared with another chart (two runs one above the other): x from event 0 to `count`, bytes up to `up` above
   * the axis and `down` below it, zoomed in too; null: this run's own, fitted to what is in view.
   */
  shared: { count: number; up: number; down: number } | null = null;
  /**
   * The x domain in wall time (ns) shared with other charts (one lane per process on one time axis), each chart's
   * times already shifted onto it; null: this run's first to last event. The byte axes stay this run's own.
   */
  timeDomain: [number, number] | null = null;
  /** Every zoom and pan, to move another chart with this one (see follow()). */
  onTransform: (t: ZoomTransform) => void = () => {};
  private following = false;
  onPick: (event: number) => void = () => {};
  onHover: (event: number | null, clientX: number, clientY: number, columnEvents: number) => void = () => {};

  constructor(
    private readonly host: HTMLElement,
    private readonly overviewHost: HTMLElement,
  ) {
    this.canvas = document.createElement('canvas');
    this.canvas.className = 'plot';
    this.axes = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
    this.axes.classList.add('axes');
    host.append(this.canvas, this.axes);
    this.ovCanvas = document.createElement('canvas');
    this.ovSvg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
    this.ovSvg.classList.add('brush');
    this.ovBrush = document.createElementNS('http://www.w3.org/2000/svg', 'g');
    this.ovSvg.append(this.ovBrush);
    overviewHost.append(this.ovCanvas, this.ovSvg);

    this.zoomer = zoom<HTMLCanvasElement, unknown>().on('zoom', (e: D3ZoomEvent<HTMLCanvasElement, unknown>) => {
      this.transform = e.transform;
      this.schedule();
      this.syncBrush();
      if (!this.following) this.onTransform(e.transform);
    });
    select(this.canvas).call(this.zoomer).on('dblclick.zoom', null);
    this.canvas.addEventListener('click', (e) => {
      const ev = this.pick(e.offsetX - MARGIN.left);
      if (ev !== null) this.onPick(ev);
    });
    this.canvas.addEventListener('mousemove', (e) => {
      const x = e.offsetX - MARGIN.left;
      const ev = this.pick(x);
      this.onHover(ev, e.clientX, e.clientY, this.columnEvents(x));
    });
    this.canvas.addEventListener('mouseleave', () => this.onHover(null, 0, 0, 0));
    this.brusher.on('brush end', (e: D3BrushEvent<unknown>) => this.brushed(e));
    new ResizeObserver(() => this.resize()).observe(host);
  }

  /** New data (a trace, a thread filter); keeps the zoom when the event count is unchanged. */
  setData(data: ChartData, kinds: Uint8Array): void {
    const keep = this.data !== null && this.data.count === data.count;
    this.data = data;
    this.kinds = kinds;
    if (!keep) this.transform = zoomIdentity;
    this.resize();
  }

  setMode(mode: XMode): void {
    this.mode = mode;
    this.transform = zoomIdentity;
    this.resize();
  }

  /**
   * Text `scale` times its usual size (the page's zoom, set in CSS as `--zoom`): the margins grow with the axis
   * labels, and the chart is laid out and redrawn at once, at the device's pixel ratio, so it stays crisp.
   */
  setTextScale(scale: number): void {
    this.textScale = scale;
    this.tickWidths.clear();
    for (const side of ['left', 'right', 'top', 'bottom'] as const) MARGIN[side] = Math.round(BASE_MARGIN[side] * scale);
    this.resize();
  }

  get xMode(): XMode {
    return this.mode;
  }

  /** The current x scale over the plot (domain: events or ns). */
  private xs(): ScaleLinear<number, number> {
    return this.transform.rescaleX(this.base);
  }

  private resize(): void {
    const width = Math.max(200, this.host.clientWidth);
    const height = Math.max(160, this.host.clientHeight);
    const plotW = width - MARGIN.left - MARGIN.right;
    const plotH = height - MARGIN.top - MARGIN.bottom - RUG_ROW * 4 - 4;
    const upperH = Math.round(plotH * UPPER_SHARE);
    this.geo = { width, height, plotW, plotH, upperH, lowerH: plotH - upperH, zeroY: MARGIN.top + upperH };
    sizeCanvas(this.canvas, width, height);
    this.axes.setAttribute('width', String(width));
    this.axes.setAttribute('height', String(height));
    const ovW = Math.max(200, this.overviewHost.clientWidth);
    const ovH = Math.max(30, this.overviewHost.clientHeight);
    sizeCanvas(this.ovCanvas, ovW, ovH);
    this.ovSvg.setAttribute('width', String(ovW));
    this.ovSvg.setAttribute('height', String(ovH));
    const data = this.data;
    if (data === null) return;
    const domain: [number, number] =
      this.mode === 'events' ? [0, Math.max(1, this.shared?.count ?? data.count)] : (this.timeDomain ?? [data.times[0] ?? 0, Math.max((data.times[data.count - 1] ?? 0) + 1, (data.times[0] ?? 0) + 1)]);
    this.base = scaleLinear().domain(domain).range([0, plotW]);
    this.fullUp = withBudgets(Math.max(1, this.shared?.up ?? 0, data.above.extent(0, data.count).max), this.budgets, 'above');
    this.fullDown = withBudgets(Math.max(1, this.shared?.down ?? 0, data.heap.extent(0, data.count).max), this.budgets, 'heap');
    this.setByteScales(this.fullUp, this.fullDown);
    // Zoom in until the visible events are about 40 px wide each.
    // On a shared time domain every chart gets the same limit (down to a microsecond across), so each follows the others.
    const maxK = Math.max(1, this.mode === 'events' ? (data.count * 40) / plotW : this.timeDomain !== null ? (domain[1] - domain[0]) / 1000 : (data.count * 400) / plotW);
    this.zoomer.scaleExtent([1, maxK]).extent([[0, 0], [plotW, plotH]]).translateExtent([[0, 0], [plotW, plotH]]);
    select(this.ovBrush).call(this.brusher.extent([[MARGIN.left, 0], [MARGIN.left + plotW, ovH]]));
    this.lastLayout = null;
    this.buildAxes();
    this.drawOverview();
    this.draw();
    this.syncBrush();
  }

  private setByteScales(upMax: number, downMax: number): void {
    // As many ticks as fit with a line of text between each two (a short chart, or large text, gets fewer).
    const room = (h: number, most: number): number => Math.max(1, Math.min(most, Math.floor(h / (this.fontPx(10) * 2.2))));
    this.upperTicks = byteTicks(upMax, room(this.geo.upperH, 3));
    this.lowerTicks = byteTicks(downMax, room(this.geo.lowerH, 4));
    this.upper = scaleLinear().domain([0, this.upperTicks[this.upperTicks.length - 1]!]).range([this.geo.upperH, 0]);
    this.lower = scaleLinear().domain([0, this.lowerTicks[this.lowerTicks.length - 1]!]).range([0, this.geo.lowerH]);
  }

  /**
   * Fits the byte axes to what is in view: zoomed in, to the largest values of the events shown (a 4 KiB stdio buffer
   * later in the run no longer flattens a student's 24-byte nodes); the whole run, to its largest values and budgets.
   * Rebuilds the axes when their ticks change.
   */
  private fitBytes(x: ScaleLinear<number, number>): void {
    const data = this.data!;
    let up = this.fullUp;
    let down = this.fullDown;
    if (this.transform.k > 1 && this.shared === null) {
      const [d0, d1] = x.domain() as [number, number];
      const lo = this.mode === 'events' ? Math.max(0, Math.floor(d0)) : Math.max(0, eventAt(data, 'time', d0) - 1);
      const hi = this.mode === 'events' ? Math.min(data.count, Math.ceil(d1) + 1) : Math.min(data.count, eventAt(data, 'time', d1) + 1);
      if (hi > lo) {
        up = Math.max(1, data.above.extent(lo, hi).max);
        down = Math.max(1, data.heap.extent(lo, hi).max);
      }
    }
    const before = this.upperTicks.join() + '/' + this.lowerTicks.join();
    this.setByteScales(up, down);
    if (this.upperTicks.join() + '/' + this.lowerTicks.join() !== before) this.buildAxes();
  }

  private schedule(): void {
    if (this.pending !== 0) return;
    this.pending = requestAnimationFrame(() => {
      this.pending = 0;
      this.draw();
    });
  }

  /** Zooms and pans to `t`, another chart's transform, without reporting it back through onTransform. */
  follow(t: ZoomTransform): void {
    this.following = true;
    select(this.canvas).call(this.zoomer.transform, t);
    this.following = false;
  }

  /**
   * What the last frame drew, as numbers (tests compare two pages): the plot's (`view`) or the overview strip's
   * columns (each one's events and extremes) or bars (each one's event and values).
   */
  drawn(which: 'view' | 'overview'): DrawnValues | null {
    const lay = which === 'view' ? this.lastLayout : this.lastOverview;
    const data = this.data;
    if (lay === null || data === null) return null;
    if (lay.kind === 'bars') {
      const ev = lay.bars.map((b) => b.event);
      return { kind: 'bars', events: ev, above: ev.map((e) => data.series.above[e]!), heap: ev.map((e) => data.series.heap[e]!), static: ev.map((e) => data.series.static[e]!), masks: [] };
    }
    const a = (v: ArrayLike<number>): number[] => Array.from(v);
    return { kind: 'columns', events: a(lay.first), end: a(lay.end), aboveMin: a(lay.aboveMin), above: a(lay.aboveMax), heapMin: a(lay.heapMin), heap: a(lay.heapMax), static: a(lay.staticMax), masks: a(lay.masks) };
  }

  /** Redraws now (marks changed). */
  redraw(): void {
    this.draw();
  }

  private draw(): void {
    const data = this.data;
    if (data === null) return;
    const t0 = performance.now();
    const ctx = this.canvas.getContext('2d')!;
    const { width, height } = this.geo;
    ctx.setTransform(devicePixelRatio, 0, 0, devicePixelRatio, 0, 0);
    ctx.clearRect(0, 0, width, height);
    ctx.save();
    ctx.translate(MARGIN.left, 0);
    // Bars cut by the edges of the view are drawn only inside the plot, never over the byte axes or past the right edge.
    ctx.beginPath();
    ctx.rect(0, 0, this.geo.plotW, height);
    ctx.clip();
    const x = this.xs();
    this.fitBytes(x);
    const lay = layout(data, this.mode, x, this.geo.plotW, this.lastLayout?.kind === 'columns' ? this.lastLayout : null);
    this.lastLayout = lay;
    this.screen.ctx = ctx;
    this.paint(this.screen, lay, x);
    ctx.restore();
    this.drawAxes(x);
    this.drawTimes.push(performance.now() - t0);
    if (this.drawTimes.length > 2000) this.drawTimes.splice(0, 1000);
  }

  /**
   * The plot, in plot coordinates (x from the plot's left edge), through `p`: exceeded budget ranges, bars or
   * summarised columns with the static layer and the class rug, budget lines with their labels, and the marks. The
   * screen draws it on the canvas every frame; the export writes it as SVG.
   */
  private paint(p: Painter, lay: Columns | Bars, x: ScaleLinear<number, number>): void {
    const shaded = this.paintRanges(p, lay, x);
    if (lay.kind === 'bars') this.paintBars(p, lay);
    else paintColumns(p, lay, (v) => this.y('above', v), (v) => this.y('heap', v), this.geo.zeroY, this.geo.zeroY + this.geo.lowerH + 3);
    this.paintBudgetLines(p, lay, shaded);
    this.paintMarks(p, lay, x);
  }

  private y(side: 'above' | 'heap', bytes: number): number {
    return side === 'above' ? MARGIN.top + this.upper(bytes) : this.geo.zeroY + this.lower(bytes);
  }

  private paintBars(p: Painter, lay: Bars): void {
    const s = this.data!.series;
    const zeroY = this.geo.zeroY;
    const gap = (lay.bars[0] ? lay.bars[0].x1 - lay.bars[0].x0 : 0) > 6 ? 1 : 0;
    for (const bar of lay.bars) {
      const e = bar.event;
      const w = Math.max(1, bar.x1 - bar.x0 - gap);
      const colour = CLASS_COLOURS[eventClassOfKind(this.kinds[e]!)];
      const top = this.y('above', s.above[e]!);
      p.fillRect(bar.x0, top, w, zeroY - top, colour);
      p.fillRect(bar.x0, zeroY, w, this.y('heap', s.heap[e]!) - zeroY, colour);
      const st = this.y('above', s.static[e]!);
      if (zeroY - st >= 0.5) p.fillRect(bar.x0, st, w, zeroY - st, SERIES_COLOURS.static);
    }
  }

  /** Text of `px` at 100 %, at the page's zoom. */
  private fontPx(px: number): number {
    return Math.round(px * this.textScale);
  }

  /**
   * The exceeded ranges, each shaded on its own side of the axis. A heap budget's shading follows the heap drawn (the
   * columns or bars above its limit): with the libc heap hidden it is where the heap shown exceeds it. Stack, static and
   * total budgets, whose usage the drawn stack + static does not show alone, and a heap budget that leaves out the
   * blocks libraries made, shade the ranges the analysis found.
   */
  private paintRanges(p: Painter, lay: Columns | Bars, x: ScaleLinear<number, number>): Map<BudgetMark, Array<[number, number]>> {
    const data = this.data!;
    const shaded = new Map<BudgetMark, Array<[number, number]>>();
    p.begin(MARK_COLOURS.exceeded);
    for (const b of this.budgets) {
      // A heap budget that leaves out the blocks libraries made does not compare with the heap drawn: its ranges do.
      const drawnHeap = b.side === 'heap' && b.library !== false;
      const spans = drawnHeap ? heapAbove(lay, data, b.bytes) : analysedSpans(b.ranges, (e) => x(positionOf(data, this.mode, e)), this.geo.plotW);
      const [top, height] = b.side === 'heap' ? [this.geo.zeroY, this.geo.lowerH] : [MARGIN.top, this.geo.upperH];
      for (const [x0, x1] of spans) p.rect(x0, top, Math.max(1, x1 - x0), height);
      shaded.set(b, spans);
    }
    p.end();
    return shaded;
  }

  /**
   * Budget lines with their labels, right-aligned on a white ground (readable over bars) and moved off the side
   * labels and each other. A stack budget counts the stack alone while the axis shows stack + static: its line is
   * drawn where stack + static reaches it, the budget above the static bytes. A budget beyond the axis's end is a
   * marker at that edge, with its label.
   */
  private paintBudgetLines(p: Painter, lay: Columns | Bars, shaded: Map<BudgetMark, Array<[number, number]>>): void {
    const text = { ...BUDGET_TEXT, size: this.fontPx(BUDGET_TEXT.size) };
    const placer = new LabelPlacer(this.sideLabelBoxes(), this.geo.plotW, MARGIN.top, this.geo.zeroY + this.geo.lowerH);
    this.lastLabels = [];
    this.lastBudgets = [];
    for (const b of this.budgets) {
      const onStatic = b.label === 'stack' ? staticInView(lay, this.data!) : 0;
      const bytes = b.bytes + onStatic;
      const edge = b.side === 'above' ? MARGIN.top : this.geo.zeroY + this.geo.lowerH;
      const offAxis = bytes > (b.side === 'above' ? this.upper : this.lower).domain()[1]!;
      const y = offAxis ? edge + (b.side === 'above' ? 0.5 : -0.5) : Math.round(this.y(b.side, bytes)) + 0.5;
      let label = budgetLabel(b) + (onStatic > 0 ? `, over static ${formatBytesFine(onStatic)}` : '');
      if (offAxis) {
        label += b.side === 'above' ? ' ↑ (above the axis)' : ' ↓ (below the axis)';
        const tip = b.side === 'above' ? 6 : -6;
        p.begin(MARK_COLOURS.budget);
        p.triangle(this.geo.plotW - 8, y - tip, this.geo.plotW - 14, y, this.geo.plotW - 2, y);
        p.end();
        p.line(this.geo.plotW - 60, y, this.geo.plotW, y, MARK_COLOURS.budget, 2, BUDGET_DASH);
      } else p.line(0, y, this.geo.plotW, y, MARK_COLOURS.budget, 1, BUDGET_DASH);
      const w = this.measure(label, text);
      // Away from the axis on the line's own side; a marker's label inside the plot.
      const prefer = (b.side === 'above') !== offAxis ? 'above' : 'below';
      const box = placer.place(w, text.size + 2, y, prefer, offAxis ? 18 : 4);
      p.fillRect(box.x, box.y, box.w, box.h, LABEL_BACK);
      p.text(label, box.x + 2, box.y + text.size - 1, text);
      this.lastLabels.push({ text: label, ...box });
      this.lastBudgets.push({ label: b.label, y: offAxis ? null : y, shaded: shaded.get(b) ?? [] });
    }
  }

  /**
   * The side labels' boxes ("stack … ↑", "heap ↓"), in plot coordinates, for the budget labels to keep off: measured
   * once after the axes are built (measuring lays the page out), not every frame.
   */
  private sideLabelBoxes(): Array<{ x: number; y: number; w: number; h: number }> {
    if (this.sideBoxes !== null) return this.sideBoxes;
    const r = this.axes.getBoundingClientRect();
    const boxes = Array.from(this.axes.querySelectorAll<SVGTextElement>('.side-label'), (t) => {
      const b = t.getBoundingClientRect();
      return { x: b.left - r.left - MARGIN.left, y: b.top - r.top, w: b.width, h: b.height };
    });
    // A chart out of sight measures nothing: measured again next time.
    if (boxes.every((b) => b.w > 0)) this.sideBoxes = boxes;
    return boxes;
  }

  /** A label's width at `style`, measured on the canvas. */
  private measure(s: string, style: TextStyle): number {
    const ctx = this.canvas.getContext('2d')!;
    ctx.save();
    ctx.font = `${style.bold ? 'bold ' : ''}${style.size}px sans-serif`;
    const w = ctx.measureText(s).width;
    ctx.restore();
    return w + 4;
  }

  /** What the last frame drew of the budgets (lines, markers, shaded spans) and the labels on the canvas, in client coordinates. */
  drawnMarks(): { labels: LabelBox[]; budgets: DrawnBudget[] } {
    const r = this.canvas.getBoundingClientRect();
    const left = r.left + MARGIN.left;
    return {
      labels: this.lastLabels.map((l) => ({ text: l.text, left: left + l.x, top: r.top + l.y, width: l.w, height: l.h })),
      budgets: this.lastBudgets.map((b) => ({ label: b.label, lineY: b.y === null ? null : r.top + b.y, shaded: b.shaded })),
    };
  }

  private paintMarks(p: Painter, lay: Columns | Bars, x: ScaleLinear<number, number>): void {
    const data = this.data!;
    const { highlight, related, orphaned, selected } = this.marks;
    const { zeroY, plotH, plotW } = this.geo;
    const markAt = (px: number, colour: string, dashed: boolean, width: number): void => {
      if (px >= 0 && px <= plotW) p.line(px, MARGIN.top, px, MARGIN.top + plotH, colour, width, dashed ? MARK_DASH : null);
    };
    const tri = (px: number): void => p.triangle(px, zeroY - 1, px - 4, zeroY - 8, px + 4, zeroY - 8);
    if (highlight.length > 0) {
      p.begin(MARK_COLOURS.highlight);
      if (lay.kind === 'columns') {
        for (let c = 0; c < lay.width; c++) if (lay.end[c]! > lay.first[c]! && anyIn(highlight, lay.first[c]!, lay.end[c]!)) tri(c + 0.5);
      } else {
        for (const bar of lay.bars) if (anyIn(highlight, bar.event, bar.event + 1)) tri((bar.x0 + bar.x1) / 2);
      }
      p.end();
    }
    const centre = (e: number): number => {
      const a = x(positionOf(data, this.mode, e));
      const b = e + 1 < data.count ? x(positionOf(data, this.mode, e + 1)) : a + 1;
      return (a + Math.max(b, a + 1)) / 2;
    };
    for (const e of related) markAt(centre(e), MARK_COLOURS.related, true, 2);
    for (const e of orphaned) markAt(centre(e), MARK_COLOURS.orphaned, true, 3);
    if (selected !== null) markAt(centre(selected), MARK_COLOURS.selected, false, 1.5);
  }
  /** The parts of the axes that change only with the size or the data: byte axes, zero line, labels, and the x axis group. */
  private buildAxes(): void {
    const svg = select(this.axes);
    svg.selectAll('*').remove();
    this.sideBoxes = null;
    const bytes = (v: unknown): string => formatBytesFine(Number(v));
    this.xAxis = svg.append('g').attr('class', 'x-axis').attr('transform', `translate(${MARGIN.left},${MARGIN.top + this.geo.plotH + RUG_ROW * 4 + 4})`).node();
    svg.append('g').attr('class', 'y-above').attr('transform', `translate(${MARGIN.left},${MARGIN.top})`).call(axisLeft(this.upper).tickValues(this.upperTicks).tickFormat(bytes));
    svg.append('g').attr('class', 'y-heap').attr('transform', `translate(${MARGIN.left},${this.geo.zeroY})`).call(axisLeft(this.lower).tickValues(this.lowerTicks).tickFormat(bytes));
    svg
      .append('line')
      .attr('x1', MARGIN.left)
      .attr('x2', MARGIN.left + this.geo.plotW)
      .attr('y1', this.geo.zeroY + 0.5)
      .attr('y2', this.geo.zeroY + 0.5)
      .attr('class', 'zero');
    // Baselines a line of their text inside the plot's top and bottom edges, at any zoom.
    svg.append('text').attr('class', 'side-label').attr('x', MARGIN.left + 4).attr('y', MARGIN.top + this.fontPx(10)).text(`stack (${STACK_MEASURE}) + static ↑`);
    svg.append('text').attr('class', 'side-label').attr('x', MARGIN.left + 4).attr('y', this.geo.zeroY + this.geo.lowerH - this.fontPx(4)).text('heap ↓');
  }

  /** The x axis, every frame (d3 updates its ticks in place). */
  private drawAxes(x: ScaleLinear<number, number>): void {
    if (this.xAxis === null) return;
    const count = Math.max(2, Math.floor(this.geo.plotW / 110));
    const ax = axisBottom(x);
    if (this.mode === 'events') {
      // Event numbers are integers: a step of at least one, and labels precise enough to tell neighbours apart.
      const [d0, d1] = x.domain() as [number, number];
      const step = Math.max(1, tickStep(d0, d1, count));
      const ticks: number[] = [];
      for (let v = Math.ceil(d0 / step) * step; v <= d1; v += step) ticks.push(v);
      ax.tickValues(ticks).tickFormat((v) => formatEventTick(+v, step));
    } else ax.ticks(count).tickFormat((v) => formatNs(+v));
    select(this.xAxis).call(ax);
    this.fitLastTick();
  }

  /** Moves the rightmost tick label left when it would run past the chart's right edge (where the SVG clips it). */
  private fitLastTick(): void {
    // d3 inserts entering ticks before the others, so the rightmost is found by position, not by DOM order.
    let last: SVGTextElement | null = null;
    let lastX = -Infinity;
    for (const text of select(this.xAxis).selectAll<SVGTextElement, unknown>('.tick text').attr('dx', null).nodes()) {
      const tickX = Number(/translate\(([-\d.e]+)/.exec(text.parentElement?.getAttribute('transform') ?? '')?.[1] ?? NaN);
      if (tickX > lastX) [last, lastX] = [text, tickX];
    }
    if (last === null) return;
    // Measuring a label lays the page out in the middle of the frame (d3 has just written the ticks): each label's
    // width is measured once for the text size (see tickWidths), then read from here.
    const label = last.textContent ?? '';
    let width = this.tickWidths.get(label);
    if (width === undefined) {
      width = last.getComputedTextLength();
      // A chart out of sight measures 0: not kept.
      if (this.tickWidths.size >= 4096) this.tickWidths.clear();
      if (width > 0) this.tickWidths.set(label, width);
    }
    const overflow = MARGIN.left + lastX + width / 2 - (this.geo.width - 1);
    if (overflow > 0) last.setAttribute('dx', String(-overflow));
  }

  /** The whole run in the strip under the chart, on the chart's byte scales shrunk to the strip. */
  private drawOverview(): void {
    const data = this.data;
    if (data === null) return;
    const w = Math.max(200, this.overviewHost.clientWidth);
    const h = Math.max(30, this.overviewHost.clientHeight);
    const ctx = this.ovCanvas.getContext('2d')!;
    ctx.setTransform(devicePixelRatio, 0, 0, devicePixelRatio, 0, 0);
    ctx.clearRect(0, 0, w, h);
    const plotW = w - MARGIN.left - MARGIN.right;
    const upperH = Math.round((h - 4) * UPPER_SHARE);
    const zeroY = 2 + upperH;
    const upMax = byteTicks(this.fullUp, 3).at(-1)!;
    const downMax = byteTicks(this.fullDown, 4).at(-1)!;
    const lay = layout(data, this.mode, scaleLinear().domain(this.base.domain()).range([0, plotW]), plotW);
    this.lastOverview = lay;
    const p = this.ovScreen;
    p.ctx = ctx;
    ctx.save();
    ctx.translate(MARGIN.left, 0);
    if (lay.kind === 'bars') {
      for (const bar of lay.bars) {
        const w = Math.max(1, bar.x1 - bar.x0 - 1);
        const top = zeroY - (data.series.above[bar.event]! / upMax) * upperH;
        p.fillRect(bar.x0, top, w, zeroY - top, SERIES_COLOURS.stack);
        p.fillRect(bar.x0, zeroY, w, (data.series.heap[bar.event]! / downMax) * (h - 4 - upperH), SERIES_COLOURS.heap);
      }
    } else paintColumns(p, lay, (v) => zeroY - (v / upMax) * upperH, (v) => zeroY + (v / downMax) * (h - 4 - upperH), zeroY, null);
    ctx.restore();
  }

  private syncBrush(): void {
    if (this.data === null) return;
    const [d0, d1] = this.xs().domain() as [number, number];
    const ov = scaleLinear().domain(this.base.domain()).range([MARGIN.left, MARGIN.left + this.geo.plotW]);
    this.syncingBrush = true;
    const full = this.transform.k === 1;
    select(this.ovBrush).call(this.brusher.move, full ? null : [ov(d0), ov(d1)]);
    this.syncingBrush = false;
  }

  private brushed(e: D3BrushEvent<unknown>): void {
    if (this.syncingBrush || !e.sourceEvent) return;
    const sel = e.selection as [number, number] | null;
    const ov = scaleLinear().domain(this.base.domain()).range([MARGIN.left, MARGIN.left + this.geo.plotW]);
    if (sel === null) {
      this.zoomToDomain(...(this.base.domain() as [number, number]));
      return;
    }
    this.zoomToDomain(ov.invert(sel[0]), ov.invert(sel[1]));
  }

  /** Zooms so that [d0, d1] of the x domain fills the plot. */
  zoomToDomain(d0: number, d1: number): void {
    const k = (this.base.range()[1]! - this.base.range()[0]!) / Math.max(1e-9, this.base(d1) - this.base(d0));
    const t = zoomIdentity.scale(k).translate(-this.base(d0), 0);
    select(this.canvas).call(this.zoomer.transform, t);
  }

  /** Zooms to show events [a, b). */
  zoomToEvents(a: number, b: number): void {
    const data = this.data;
    if (data === null) return;
    this.zoomToDomain(positionOf(data, this.mode, a), b < data.count ? positionOf(data, this.mode, b) : this.base.domain()[1]!);
  }

  /** Pans, without zooming, so that event e is in view (centred if it was outside). */
  reveal(e: number): void {
    const data = this.data;
    if (data === null) return;
    const x = this.xs();
    const px = x(positionOf(data, this.mode, e));
    if (px >= 0 && px <= this.geo.plotW) return;
    const t = this.transform.translate((this.geo.plotW / 2 - px) / this.transform.k, 0);
    select(this.canvas).call(this.zoomer.transform, t);
  }

  /**
   * Zooms by `factor` around event `around` when given (it keeps its place on the screen; one out of view is first
   * brought to the centre), else around the centre of the view.
   */
  zoomBy(factor: number, around: number | null = null): void {
    const data = this.data;
    if (around === null || data === null || around < 0 || around >= data.count) {
      select(this.canvas).call(this.zoomer.scaleBy, factor);
      return;
    }
    this.reveal(around);
    const x = this.xs();
    const a = x(positionOf(data, this.mode, around));
    const b = around + 1 < data.count ? x(positionOf(data, this.mode, around + 1)) : a;
    // The point is in the zoom's own coordinates: the plot's, as the extent given in resize().
    select(this.canvas).call(this.zoomer.scaleBy, factor, [(a + b) / 2, 0]);
  }

  panBy(px: number): void {
    select(this.canvas).call(this.zoomer.translateBy, px / this.transform.k, 0);
  }

  resetZoom(): void {
    select(this.canvas).call(this.zoomer.transform, zoomIdentity);
  }

  /**
   * Paints now when a frame is still waiting: a click or hover that comes between a zoom and its frame is aimed at the
   * new view (where `clientXOf` and the axes already place the bars), so it must be taken against that view's layout,
   * not the one painted before the zoom.
   */
  private settle(): void {
    if (this.pending === 0) return;
    cancelAnimationFrame(this.pending);
    this.pending = 0;
    this.draw();
  }

  /** The event under plot x (px from the plot's left): the event itself, or a summarised column's fullest event. */
  pick(px: number): number | null {
    this.settle();
    const data = this.data;
    const lay = this.lastLayout;
    if (data === null || lay === null || px < 0 || px > this.geo.plotW) return null;
    if (lay.kind === 'bars') {
      for (const bar of lay.bars) if (px >= bar.x0 && px < bar.x1) return bar.event;
      return null;
    }
    const c = Math.floor(px);
    const a = lay.first[c]!;
    const b = lay.end[c]!;
    return b > a ? representative(data, a, b) : null;
  }

  private columnEvents(px: number): number {
    this.settle();
    const lay = this.lastLayout;
    if (lay === null || lay.kind === 'bars' || px < 0 || px >= lay.width) return 1;
    const c = Math.floor(px);
    return lay.end[c]! - lay.first[c]!;
  }

  /** Viewport x (clientX) of event e's bar centre, or null when out of view. */
  clientXOf(e: number): number | null {
    const data = this.data;
    if (data === null) return null;
    const x = this.xs();
    const a = x(positionOf(data, this.mode, e));
    const b = e + 1 < data.count ? x(positionOf(data, this.mode, e + 1)) : a + MIN_BAR_PX;
    const px = (a + b) / 2;
    if (px < 0 || px > this.geo.plotW) return null;
    return this.canvas.getBoundingClientRect().left + MARGIN.left + px;
  }

  /** Viewport y a little inside the bars (below the axis, in the heap half). */
  clientYOfPlot(side: 'above' | 'heap'): number {
    const r = this.canvas.getBoundingClientRect();
    return r.top + (side === 'above' ? this.geo.zeroY - 3 : this.geo.zeroY + 3);
  }

  /** Events in view [first, end). */
  visibleEvents(): [number, number] {
    const data = this.data;
    if (data === null) return [0, 0];
    const [d0, d1] = this.xs().domain() as [number, number];
    return [eventAt(data, this.mode, d0), Math.min(data.count, eventAt(data, this.mode, d1) + 1)];
  }

  /**
   * The current view painted through `p` (the export's SVG), exactly as the screen's last frame: the same layout, in
   * plot coordinates. Returns the sizes and the axes (d3's SVG, numbers only) to put around it; null before a trace.
   */
  paintExport(p: Painter): { width: number; height: number; plotW: number; axes: SVGSVGElement } | null {
    const lay = this.lastLayout;
    if (this.data === null || lay === null) return null;
    this.paint(p, lay, this.xs());
    return { width: this.geo.width, height: this.geo.height, plotW: this.geo.plotW, axes: this.axes };
  }
}

/** A budget line's label: its kind, its limit, for a stack budget the stack figure it checks, and what a heap budget leaves out. */
export function budgetLabel(b: BudgetMark): string {
  const what = b.label === 'stack' ? ` (${STACK_MEASURE})` : b.library === false ? ' (blocks libraries made left out)' : '';
  return `${b.label} budget ${formatBytesFine(b.bytes)}${what}`;
}

/**
 * Summarised columns through `p`: max (light) and min (dark) of each series, one batch per colour (thousands of
 * separate rectangles cost more than the layout itself); with `rugTop`, the class rug under the plot.
 */
function paintColumns(p: Painter, cols: Columns, up: (v: number) => number, down: (v: number) => number, zeroY: number, rugTop: number | null): void {
  const fillCols = (colour: string, top: (c: number) => number, bottom: (c: number) => number): void => {
    p.begin(colour);
    for (let c = 0; c < cols.width; c++) {
      const a = top(c);
      const b = bottom(c);
      if (b - a >= 0.5) p.rect(c, a, 1, b - a);
    }
    p.end();
  };
  fillCols(SERIES_COLOURS.stack, (c) => up(cols.aboveMax[c]!), () => zeroY);
  fillCols(SERIES_COLOURS.stackMin, (c) => up(cols.aboveMin[c]!), () => zeroY);
  fillCols(SERIES_COLOURS.static, (c) => up(cols.staticMax[c]!), () => zeroY);
  fillCols(SERIES_COLOURS.heap, () => zeroY, (c) => down(cols.heapMax[c]!));
  fillCols(SERIES_COLOURS.heapMin, () => zeroY, (c) => down(cols.heapMin[c]!));
  if (rugTop === null) return;
  // The rug: which classes of event occur in each column.
  EVENT_CLASSES.slice(0, 4).forEach((cls, row) => {
    const bit = 1 << row;
    p.begin(CLASS_COLOURS[cls]);
    for (let c = 0; c < cols.width; c++) if (cols.masks[c]! & bit) p.rect(c, rugTop + row * RUG_ROW, 1, RUG_ROW - 1);
    p.end();
  });
}

/** An axis's largest value `max`, stretched to the budgets of its side that lie within BUDGET_REACH of it. */
export function withBudgets(max: number, budgets: readonly BudgetMark[], side: BudgetMark['side']): number {
  return Math.max(max, ...budgets.filter((b) => b.side === side && b.bytes <= max * BUDGET_REACH).map((b) => b.bytes));
}

/** The spans (plot x) of the columns or bars whose heap drawn is above `limit`, neighbours merged. */
function heapAbove(lay: Columns | Bars, data: ChartData, limit: number): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  const add = (x0: number, x1: number): void => {
    const last = spans[spans.length - 1];
    if (last !== undefined && x0 <= last[1] + 0.5) last[1] = Math.max(last[1], x1);
    else spans.push([x0, x1]);
  };
  if (lay.kind === 'bars') {
    for (const bar of lay.bars) if (data.series.heap[bar.event]! > limit) add(bar.x0, bar.x1);
  } else {
    for (let c = 0; c < lay.width; c++) if (lay.end[c]! > lay.first[c]! && lay.heapMax[c]! > limit) add(c, c + 1);
  }
  return spans;
}

/** The analysis's ranges [first, last event] as spans of the plot, cut to it. */
function analysedSpans(ranges: ReadonlyArray<[number, number]>, at: (e: number) => number, plotW: number): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  for (const [s, e] of ranges) {
    const x0 = Math.max(0, at(s));
    const x1 = Math.min(plotW, at(e + 1));
    if (x1 >= 0 && x0 <= plotW) spans.push([x0, x1]);
  }
  return spans;
}

/** The most static bytes among the events in view (registered at start-up, so one value for nearly all of a run). */
function staticInView(lay: Columns | Bars, data: ChartData): number {
  let most = 0;
  if (lay.kind === 'bars') for (const bar of lay.bars) most = Math.max(most, data.series.static[bar.event]!);
  else for (let c = 0; c < lay.width; c++) most = Math.max(most, lay.staticMax[c]!);
  return most;
}

/**
 * Places labels beside horizontal lines without overlapping the boxes already taken: right-aligned at the plot's end
 * (the side labels are at its start), on the preferred side of the line, else the other side, else stacked further
 * from it; one that cannot be moved clear keeps its first place.
 */
class LabelPlacer {
  private readonly taken: Array<{ x: number; y: number; w: number; h: number }>;

  constructor(
    fixed: ReadonlyArray<{ x: number; y: number; w: number; h: number }>,
    private readonly plotW: number,
    /** The plot's top and bottom: a label stays between them. */
    private readonly top: number,
    private readonly bottom: number,
  ) {
    this.taken = [...fixed];
  }

  place(w: number, h: number, lineY: number, prefer: 'above' | 'below', right: number): { x: number; y: number; w: number; h: number } {
    const x = Math.max(0, this.plotW - right - w);
    const above = (k: number): number => lineY - 2 - h - k * h;
    const below = (k: number): number => lineY + 2 + k * h;
    const tries = [0, 1, 2].flatMap((k) => (prefer === 'above' ? [above(k), below(k)] : [below(k), above(k)]));
    const fits = (y: number): boolean => y >= this.top && y + h <= this.bottom && !this.taken.some((t) => x < t.x + t.w && t.x < x + w && y < t.y + t.h && t.y < y + h);
    const box = { x, y: tries.find(fits) ?? tries[0]!, w, h };
    this.taken.push(box);
    return box;
  }
}

function sizeCanvas(c: HTMLCanvasElement, w: number, h: number): void {
  c.width = Math.round(w * devicePixelRatio);
  c.height = Math.round(h * devicePixelRatio);
  c.style.width = `${w}px`;
  c.style.height = `${h}px`;
}

/**
 * An event number on the x axis, ticks `step` apart: short ("540k", "1.25M") when that many decimals still tell
 * neighbouring ticks apart, else in full ("536,712"), so deep zoom never shows the same label twice.
 */
export function formatEventTick(v: number, step: number): string {
  if (v < 1e4) return String(v);
  const [unit, suffix] = v >= 1e6 ? [1e6, 'M'] : [1e3, 'k'];
  const decimals = Math.max(0, Math.ceil(Math.log10(unit / step) - 1e-9));
  if (decimals <= 2) return `${+(v / unit).toFixed(decimals)}${suffix}`;
  return v.toLocaleString('en-US');
}

export function formatNs(ns: number): string {
  if (ns >= 1e9) return `${+(ns / 1e9).toFixed(3)} s`;
  if (ns >= 1e6) return `${+(ns / 1e6).toFixed(2)} ms`;
  if (ns >= 1e3) return `${+(ns / 1e3).toFixed(1)} µs`;
  return `${Math.round(ns)} ns`;
}
