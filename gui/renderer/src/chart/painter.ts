// What the chart draws with: a few shapes (batches of rectangles and triangles of one colour, lines, text) that the screen draws on a canvas and the SVG export writes as elements, so the one drawing routine in chart.ts serves both and they cannot drift.

export interface TextStyle {
  colour: string;
  size: number;
  bold?: boolean;
}

export interface Painter {
  /** Starts a batch of shapes filled with one colour: one path on the canvas, one <path> element in SVG. */
  begin(colour: string): void;
  rect(x: number, y: number, w: number, h: number): void;
  triangle(x0: number, y0: number, x1: number, y1: number, x2: number, y2: number): void;
  /** Fills the batch. */
  end(): void;
  /** One rectangle of its own colour (a bar). */
  fillRect(x: number, y: number, w: number, h: number, colour: string): void;
  line(x0: number, y0: number, x1: number, y1: number, colour: string, width: number, dash: readonly number[] | null): void;
  /** Text with its baseline at y, starting at x. */
  text(s: string, x: number, y: number, style: TextStyle): void;
}

const font = (s: TextStyle): string => `${s.bold ? 'bold ' : ''}${s.size}px sans-serif`;

/** The screen: draws on a canvas context (made once per chart; the context is set before each frame). */
export class CanvasPainter implements Painter {
  ctx: CanvasRenderingContext2D | null = null;

  private get c(): CanvasRenderingContext2D {
    return this.ctx!;
  }

  begin(colour: string): void {
    this.c.fillStyle = colour;
    this.c.beginPath();
  }

  rect(x: number, y: number, w: number, h: number): void {
    this.c.rect(x, y, w, h);
  }

  triangle(x0: number, y0: number, x1: number, y1: number, x2: number, y2: number): void {
    const c = this.c;
    c.moveTo(x0, y0);
    c.lineTo(x1, y1);
    c.lineTo(x2, y2);
    c.closePath();
  }

  end(): void {
    this.c.fill();
  }

  fillRect(x: number, y: number, w: number, h: number, colour: string): void {
    this.c.fillStyle = colour;
    this.c.fillRect(x, y, w, h);
  }

  line(x0: number, y0: number, x1: number, y1: number, colour: string, width: number, dash: readonly number[] | null): void {
    const c = this.c;
    c.save();
    c.strokeStyle = colour;
    c.lineWidth = width;
    if (dash !== null) c.setLineDash(dash as number[]);
    c.beginPath();
    c.moveTo(x0, y0);
    c.lineTo(x1, y1);
    c.stroke();
    c.restore();
  }

  text(s: string, x: number, y: number, style: TextStyle): void {
    this.c.font = font(style);
    this.c.fillStyle = style.colour;
    this.c.fillText(s, x, y);
  }
}

const n = (v: number): string => String(Math.round(v * 10) / 10);

/** Escapes text and attribute values for XML. */
export function xmlEscape(s: string): string {
  return s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

/** The export: the same shapes as SVG elements, collected as text (no DOM, no element per event of the trace). */
export class SvgPainter implements Painter {
  readonly parts: string[] = [];
  private colour = '';
  private d: string[] = [];

  begin(colour: string): void {
    this.colour = colour;
    this.d = [];
  }

  rect(x: number, y: number, w: number, h: number): void {
    this.d.push(`M${n(x)} ${n(y)}h${n(w)}v${n(h)}h${n(-w)}Z`);
  }

  triangle(x0: number, y0: number, x1: number, y1: number, x2: number, y2: number): void {
    this.d.push(`M${n(x0)} ${n(y0)}L${n(x1)} ${n(y1)}L${n(x2)} ${n(y2)}Z`);
  }

  end(): void {
    if (this.d.length > 0) this.parts.push(`<path fill="${this.colour}" d="${this.d.join('')}"/>`);
    this.d = [];
  }

  fillRect(x: number, y: number, w: number, h: number, colour: string): void {
    this.parts.push(`<rect x="${n(x)}" y="${n(y)}" width="${n(w)}" height="${n(h)}" fill="${colour}"/>`);
  }

  line(x0: number, y0: number, x1: number, y1: number, colour: string, width: number, dash: readonly number[] | null): void {
    const dashed = dash === null ? '' : ` stroke-dasharray="${dash.join(' ')}"`;
    this.parts.push(`<line x1="${n(x0)}" y1="${n(y0)}" x2="${n(x1)}" y2="${n(y1)}" stroke="${colour}" stroke-width="${width}"${dashed}/>`);
  }

  text(s: string, x: number, y: number, style: TextStyle): void {
    const bold = style.bold ? ' font-weight="bold"' : '';
    this.parts.push(`<text x="${n(x)}" y="${n(y)}" fill="${style.colour}" font-size="${style.size}"${bold}>${xmlEscape(s)}</text>`);
  }
}
