// `npm run bench:gui`: records a trace of about five million events (bench/gui/workload.c built through cc-memwrap), serves it with the viewer, and measures in real Chromium the time to the first chart and the time of each frame while zooming and panning. Prints the numbers; the targets are a first chart under 3 s and frames under 16 ms. `npm run bench:gui -- 1000000 --html` measures the self-contained HTML report instead: its size, and the same times with the file opened from file://.
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Page } from 'playwright-core';
import { packageRoot } from '../../package-root.js';
import { RecentList } from '../../host/recent.js';
import { startServer } from '../../host/server.js';
import { TraceSession } from '../../host/trace-session.js';
import { REPORT_TEMPLATE_DIR, writeHtmlReport } from '../../host/html-report.js';
import { pathToFileURL } from 'node:url';
import { median, sh } from '../measure.js';
import { copyFileSync, rmSync } from 'node:fs';
import { cacheDirFor, cacheFiles } from '../../host/index-cache.js';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];
const RENDERER = path.join(packageRoot, 'dist', 'gui', 'renderer');

interface Handle {
  ready: boolean;
  error: string | null;
  events: number;
  timings: { start: number; bytes: number; decoded: number; firstChart: number };
  drawTimes: number[];
  zoomBy(f: number): void;
  panBy(px: number): void;
  visibleEvents(): [number, number];
}

/** Builds the workload through cc-memwrap and runs it once; returns its trace. */
function recordTrace(events: number): string {
  const dir = path.join(os.tmpdir(), 'cc-memwrap-gui-bench');
  mkdirSync(dir, { recursive: true });
  for (const f of readdirSync(dir)) if (f.endsWith('.mwtrace')) rmSync(path.join(dir, f), { force: true });
  const exe = path.join(dir, 'workload');
  sh(path.join(packageRoot, 'bin', 'cc-memwrap'), ['gcc', '-O2', path.join(packageRoot, 'bench', 'gui', 'workload.c'), '-o', exe]);
  sh(exe, [String(events)], { env: { ...process.env, MEMWRAP_TRACE: path.join(dir, 'workload.mwtrace') }, cwd: path.join(packageRoot, 'bench', 'gui') });
  return path.join(dir, 'workload.mwtrace');
}

const quantile = (xs: number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
};
const ms = (v: number): string => `${v.toFixed(1)} ms`;

const handle = (page: Page): Promise<Handle> => page.evaluate(() => {
  const h = (window as unknown as { ccMemwrapView: Handle }).ccMemwrapView;
  return { ready: h.ready, error: h.error, events: h.events, timings: h.timings, drawTimes: [...h.drawTimes] } as Handle;
});

async function openOnce(page: Page, url: string, timeout = 120_000): Promise<Handle> {
  await page.goto(url);
  await page.waitForFunction(() => {
    const h = (window as unknown as { ccMemwrapView?: Handle }).ccMemwrapView;
    return h?.ready === true || (h?.error ?? null) !== null;
  }, null, { timeout, polling: 20 });
  const h = await handle(page);
  if (h.error) throw new Error(h.error);
  return h;
}

/** Draw times of the frames of real wheel zooms and mouse drags over the chart. */
async function interact(page: Page): Promise<{ zoom: number[]; pan: number[]; deepest: number }> {
  const box = (await page.locator('canvas.plot').boundingBox())!;
  const x = box.x + box.width / 2;
  const y = box.y + box.height / 2;
  const drawn = async (): Promise<number> => (await handle(page)).drawTimes.length;
  const frame = () => page.evaluate(() => new Promise<void>((r) => requestAnimationFrame(() => requestAnimationFrame(() => r()))));
  const since = async (n: number): Promise<number[]> => (await handle(page)).drawTimes.slice(n);
  let n = await drawn();
  let deepest = Infinity;
  for (let i = 0; i < 40; i++) {
    await page.mouse.move(x, y);
    await page.mouse.wheel(0, -240);
    await frame();
    const [a, b] = await page.evaluate(() => (window as unknown as { ccMemwrapView: Handle }).ccMemwrapView.visibleEvents());
    deepest = Math.min(deepest, b - a);
  }
  const zoom = await since(n);
  // Back out a little and drag across.
  for (let i = 0; i < 25; i++) {
    await page.mouse.wheel(0, 240);
    await frame();
  }
  n = await drawn();
  for (let i = 0; i < 3; i++) {
    await page.mouse.move(x, y);
    await page.mouse.down();
    for (let k = 1; k <= 20; k++) {
      await page.mouse.move(x + (i % 2 ? k : -k) * 15, y);
      await frame();
    }
    await page.mouse.up();
  }
  // And at the widest view: every column summarises thousands of events.
  for (let i = 0; i < 30; i++) {
    await page.mouse.wheel(0, 480);
    await frame();
  }
  for (let k = 1; k <= 20; k++) {
    await page.evaluate(() => (window as unknown as { ccMemwrapView: Handle }).ccMemwrapView.zoomBy(1.3));
    await frame();
  }
  const pan = await since(n);
  return { zoom, pan, deepest };
}

/** Writes the HTML report of `session` beside its trace; returns its file: URL, and prints its size and writing time. */
function htmlReportOf(session: TraceSession): string {
  const out = session.path.replace(/\.mwtrace$/, '.html');
  const t0 = performance.now();
  const size = writeHtmlReport(session, out, REPORT_TEMPLATE_DIR);
  const written = performance.now() - t0;
  process.stdout.write(`HTML report: ${(size / 1048576).toFixed(1)} MiB for a ${(session.bytes.byteLength / 1048576).toFixed(1)} MiB trace, written in ${ms(written)} (${out})\n`);
  return pathToFileURL(out).href;
}

/** Records bench/workloads/binary-trees.c at depth 16 built with `cc-memwrap gcc -O2`: about 118 million events. */
function recordBinaryTrees(): string {
  const dir = path.join(os.tmpdir(), 'cc-memwrap-gui-bench-big');
  mkdirSync(dir, { recursive: true });
  const exe = path.join(dir, 'binary-trees');
  sh(path.join(packageRoot, 'bin', 'cc-memwrap'), ['gcc', '-O2', path.join(packageRoot, 'bench', 'workloads', 'binary-trees.c'), '-o', exe]);
  sh(exe, ['16'], { env: { ...process.env, MEMWRAP_TRACE: path.join(dir, 'bt16.mwtrace') }, cwd: dir });
  return path.join(dir, 'bt16.mwtrace');
}

/** Starts a server on a new index-mode session of `trace` (its index read from the cache, or built). */
async function indexServer(trace: string): Promise<{ url: string; session: TraceSession; close(): Promise<void> }> {
  const session = await TraceSession.open(trace, { index: true });
  const server = await startServer({ rendererDir: RENDERER, session, recent: new RecentList(path.join(path.dirname(trace), 'recent.json')) });
  return { url: server.pageUrl(), session, close: () => server.close() };
}

/**
 * Chromium asked to unthrottle its frame rate, so that a frame starts as soon as the last one is done and an interval
 * between animation frames is the time the page needs per frame (with vsync every interval is at least 16.7 ms at
 * 60 Hz). Whether the browser obeys shows in an idle page's intervals, printed as the floor: headless Chromium 150
 * keeps 60 Hz.
 */
const UNTHROTTLED_ARGS = [...CHROMIUM_ARGS, '--disable-gpu-vsync', '--disable-frame-rate-limit'];

/** Intervals between animation frames while `act` runs: what a person sees, not only the draw call's time. */
async function frameIntervals(page: Page, act: () => Promise<void>): Promise<number[]> {
  await page.evaluate(() => {
    // One chain of callbacks per measurement: a chain still waiting for its next frame when the next measurement
    // starts ends there rather than adding its frames to the new one's.
    const w = window as unknown as { benchFrames: number[]; benchRun?: number };
    const run = (w.benchRun ?? 0) + 1;
    const frames: number[] = [];
    w.benchRun = run;
    w.benchFrames = frames;
    const tick = (t: number): void => {
      if (w.benchRun !== run) return;
      frames.push(t);
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
  });
  await act();
  const frames = await page.evaluate(() => {
    const w = window as unknown as { benchFrames: number[]; benchRun: number };
    w.benchRun++;
    return w.benchFrames;
  });
  return frames.slice(1).map((t, i) => t - frames[i]!);
}

/** Intervals between animation frames of a page doing nothing for `millis`: the floor a measurement in this browser can show. */
async function idleIntervals(page: Page, millis = 2000): Promise<number[]> {
  return frameIntervals(page, () => page.waitForTimeout(millis));
}

const spread = (xs: number[]): string => (xs.length === 0 ? 'none' : `${xs.length} frames, median ${ms(median(xs))}, p95 ${ms(quantile(xs, 0.95))}, max ${ms(Math.max(...xs))}`);

/**
 * Frame intervals of the same zooms and pans in a browser launched with `args` on `url` (a new page of an index-mode
 * session): an idle page's first, then the interaction's.
 */
async function framesIn(args: string[], url: string): Promise<{ idle: number[]; frames: number[]; draws: number[] }> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, args });
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await openOnce(page, url);
    const idle = await idleIntervals(page);
    let draws: { zoom: number[]; pan: number[] } = { zoom: [], pan: [] };
    const frames = await frameIntervals(page, async () => {
      draws = await interact(page);
    });
    return { idle, frames, draws: [...draws.zoom, ...draws.pan] };
  } finally {
    await browser.close();
  }
}

/** The lines of both frame measurements, vsync first, each named. */
function frameLines(vsync: { idle: number[]; frames: number[] }, free: { idle: number[]; frames: number[]; draws: number[] }): string[] {
  const floor = quantile(free.idle, 0.95);
  return [
    `frame intervals (requestAnimationFrame) with vsync at 60 Hz, what a screen shows (never under 16.7 ms): idle page ${spread(vsync.idle)}`,
    `  while zooming and panning: ${spread(vsync.frames)} (target p95 ≤ 16 ms)`,
    `frame intervals with the frame rate unthrottled (--disable-gpu-vsync --disable-frame-rate-limit), the time the page needs per frame if the browser obeys: floor (idle page) ${spread(free.idle)}`,
    `  while zooming and panning: ${spread(free.frames)} (target p95 ≤ 16 ms)`,
    ...(floor >= 16 ? [`  (the idle page's p95 is ${ms(floor)}: this browser kept its frame rate despite the switches, so these intervals cannot show the target either)`] : []),
    `  draw time per frame in the unthrottled browser: median ${ms(median(free.draws))}, p95 ${ms(quantile(free.draws, 0.95))}, max ${ms(Math.max(...free.draws))}`,
  ];
}

/**
 * `npm run bench:gui -- --big trace --frames`: only the frame measurements, on `trace` opened in place through its
 * index (built beside it when missing or of an older format), vsync and unthrottled.
 */
async function framesMain(trace: string): Promise<void> {
  if (!existsSync(path.join(RENDERER, 'index.html'))) throw new Error(`${RENDERER} has no index.html: run npm run build`);
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
  const host = await indexServer(trace);
  try {
    await host.session.index();
    while (host.session.reportState.state === 'waiting') await new Promise((r) => setTimeout(r, 200));
    const vsync = await framesIn(CHROMIUM_ARGS, host.url);
    const free = await framesIn(UNTHROTTLED_ARGS, host.url);
    process.stdout.write(`trace: ${trace}\n` + frameLines(vsync, free).join('\n') + '\n');
  } finally {
    await host.close();
  }
}

/**
 * `npm run bench:gui -- --big [trace]`: the viewer in index mode on a trace of over 10^8 events (binary-trees at
 * depth 16 unless a trace is named): the first chart with the index built on the way and with it cached, frame
 * intervals while zooming and panning, jumps to events by number, the page's JS heap, the host's memory.
 */
async function bigMain(named: string | undefined): Promise<void> {
  if (!existsSync(path.join(RENDERER, 'index.html'))) throw new Error(`${RENDERER} has no index.html: run npm run build`);
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
  let trace: string;
  if (named !== undefined) {
    // A copy in the bench's folder: its index is built beside it, never beside the original.
    const dir = path.join(os.tmpdir(), 'cc-memwrap-gui-bench-big');
    mkdirSync(dir, { recursive: true });
    trace = path.join(dir, path.basename(named));
    if (!existsSync(trace) || statSync(trace).size !== statSync(named).size) copyFileSync(named, trace);
  } else {
    process.stdout.write('recording binary-trees at depth 16…\n');
    trace = recordBinaryTrees();
  }
  rmSync(cacheDirFor(trace), { recursive: true, force: true });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const lines: string[] = [];
  try {
    // 1. No index yet: the page waits while the host builds the summaries, draws the chart, and the events are
    // indexed after it; a jump asked for at once waits for them.
    const cpu0 = process.cpuUsage();
    let host = await indexServer(trace);
    let page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const built = await openOnce(page, host.url, 1_800_000);
    const cpuFirst = process.cpuUsage(cpu0);
    const state = host.session.indexState;
    const summariesS = state.state === 'ready' ? state.seconds : NaN;
    const early = Math.floor(built.events * 0.37);
    const j0 = performance.now();
    await page.fill('#search', String(early));
    await page.press('#search', 'Enter');
    await page.waitForFunction(() => !document.querySelector<HTMLElement>('#events-state')!.hidden, null, { timeout: 60_000 }).catch(() => {});
    const notice = await page.locator('#events-state').textContent();
    await page.waitForFunction((e) => (document.querySelector('#detail dl.facts dd')?.textContent ?? '').startsWith(`${e} · `), early, { timeout: 1_800_000, polling: 100 });
    const earlyJump = (performance.now() - j0) / 1000;
    await host.session.index();
    const cpu = process.cpuUsage(cpu0);
    const eventsState = host.session.eventsState;
    const buildS = eventsState.state === 'ready' ? eventsState.seconds : NaN;
    // The panel's report, computed once after the index (and kept beside it): measured, and awaited so that the
    // frames below are not measured beside it.
    const r0 = performance.now();
    while (host.session.reportState.state === 'waiting') await new Promise((r) => setTimeout(r, 200));
    const reportS = (performance.now() - r0) / 1000;
    // The panels' data (asked for by the page as it opened; kept beside the index), likewise.
    const p0 = performance.now();
    const p0cpu = process.cpuUsage();
    while (['waiting', 'computing'].includes(host.session.panels().state)) await new Promise((r) => setTimeout(r, 200));
    const panelsS = (performance.now() - p0) / 1000;
    const panelsCpu = process.cpuUsage(p0cpu);
    await page.close();
    await host.close();
    // 2. The index cached: a new host session each time, 3 page loads.
    const cached: number[] = [];
    for (let i = 0; i < 3; i++) {
      await host.close();
      host = await indexServer(trace);
      page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      cached.push((await openOnce(page, host.url)).timings.firstChart);
      if (i < 2) await page.close();
    }
    const shots = path.join(packageRoot, 'test', 'gui', 'screenshots');
    mkdirSync(shots, { recursive: true });
    await page.screenshot({ path: path.join(shots, 'bench-index-mode-overview.png') });
    // 3. Frames while zooming in (down to events one by one, fetched from the host) and panning.
    const events = built.events;
    const idle = await idleIntervals(page);
    let draws: { zoom: number[]; pan: number[] } = { zoom: [], pan: [] };
    const intervals = await frameIntervals(page, async () => {
      draws = await interact(page);
    });
    const drawTimes = [...draws.zoom, ...draws.pan];
    await page.screenshot({ path: path.join(shots, 'bench-index-mode-zoomed.png') });
    // 4. Jumps to events by number, typed in the search box: until the detail shows it and its bars are drawn.
    const jumps: number[] = [];
    for (const f of [0.05, 0.37, 0.61, 0.83, 0.999]) {
      const n = Math.floor(events * f);
      const t0 = performance.now();
      await page.fill('#search', String(n));
      await page.press('#search', 'Enter');
      await page.waitForFunction(
        (e) => {
          const h = (window as unknown as { ccMemwrapView: { selected: number | null; hasEvents(a: number, b: number): boolean; timings: { detailShown: number } } }).ccMemwrapView;
          return h.selected === e && h.hasEvents(Math.max(0, e - 100), e + 100) && (document.querySelector('#detail dl.facts dd')?.textContent ?? '').startsWith(`${e} · `);
        },
        n,
        { timeout: 60_000, polling: 10 },
      );
      jumps.push(performance.now() - t0);
    }
    await page.screenshot({ path: path.join(shots, 'bench-index-mode-jump.png') });
    const cdp = await page.context().newCDPSession(page);
    const heap = (await cdp.send('Runtime.getHeapUsage')) as { usedSize: number; totalSize: number };
    const fetches = await page.evaluate(() => (window as unknown as { ccMemwrapView: { fetchTimes: number[] } }).ccMemwrapView.fetchTimes);
    // 5. The same zooms and pans in a second browser with its frame rate unthrottled, on a new page.
    const free = await framesIn(UNTHROTTLED_ARGS, host.url);
    const rss = process.resourceUsage().maxRSS / 1024;
    const mib = statSync(trace).size / 1048576;
    const indexMib = statSync(cacheFiles(cacheDirFor(trace)).index).size / 1048576;
    lines.push(
      `trace: ${events.toLocaleString('en-US')} events, ${mib.toFixed(1)} MiB (${trace}); index ${indexMib.toFixed(1)} MiB (${cacheFiles(cacheDirFor(trace)).index})`,
      `first chart with the index built on the way: ${(built.timings.firstChart / 1000).toFixed(1)} s (its summaries built in ${summariesS.toFixed(1)} s, host CPU ${((cpuFirst.user + cpuFirst.system) / 1e6).toFixed(1)} s; target ≤ 30 s)`,
      `  then the events indexed: whole index ready ${buildS.toFixed(1)} s after the build began (host CPU ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s for both stages and the panels' passes under way beside the events); a jump asked for at the first chart shown after ${earlyJump.toFixed(1)} s, the page saying "${(notice ?? '').split(' — ')[0]}" meanwhile`,
      `first chart with the index cached, 3 page loads: median ${(median(cached) / 1000).toFixed(2)} s (${cached.map((t) => (t / 1000).toFixed(2)).join(', ')}; target ≤ 3 s)`,
      ...frameLines({ idle, frames: intervals }, free),
      `the panel's report (one more pass, after the index): ready ${reportS.toFixed(1)} s after the whole index, then kept beside it`,
      `the panels' data (host/index-panels.ts, asked for as the page opened, computed from when the summaries were ready, beside the events' build): ready ${panelsS.toFixed(1)} s after the report (${host.session.panelsState.state}; host CPU meanwhile ${((panelsCpu.user + panelsCpu.system) / 1e6).toFixed(1)} s), then kept beside the index`,
      `draw time per frame while zooming and panning: median ${ms(median(drawTimes))}, p95 ${ms(quantile(drawTimes, 0.95))}, max ${ms(Math.max(...drawTimes))}`,
      `events fetched while zooming: ${fetches.length} windows, median ${ms(median(fetches))}, max ${ms(Math.max(0, ...fetches))}`,
      `jump to an event by number (5 jumps, until its detail and bars are shown): median ${ms(median(jumps))}, max ${ms(Math.max(...jumps))} (target ≤ 1 s)`,
      `page JS heap after: ${(heap.usedSize / 1048576).toFixed(1)} MiB used of ${(heap.totalSize / 1048576).toFixed(1)} MiB (target ≤ 1 GiB)`,
      `host (this process: server, index build thread, browser driver) max RSS: ${rss.toFixed(0)} MiB`,
    );
    await host.close();
  } finally {
    await browser.close();
  }
  process.stdout.write(lines.join('\n') + '\n');
}

async function main(): Promise<void> {
  const big = process.argv.indexOf('--big');
  if (big >= 0 && process.argv.includes('--frames')) {
    const trace = process.argv[big + 1];
    if (trace === undefined || trace === '--frames') throw new Error('--frames needs a trace: npm run bench:gui -- --big TRACE --frames');
    return framesMain(trace);
  }
  if (big >= 0) return bigMain(process.argv[big + 1]);
  const html = process.argv.includes('--html');
  const events = Number(process.argv.slice(2).find((a) => a !== '--html') ?? 5_000_000);
  if (!existsSync(path.join(RENDERER, 'index.html'))) throw new Error(`${RENDERER} has no index.html: run npm run build`);
  if (html && !existsSync(path.join(REPORT_TEMPLATE_DIR, 'index.html'))) throw new Error(`${REPORT_TEMPLATE_DIR} has no index.html: run npm run build`);
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`);
  process.stdout.write(`recording a trace of about ${events.toLocaleString('en-US')} events…\n`);
  const trace = recordTrace(events);
  // Whole mode, whatever the trace's size (5 million events is over the index's threshold; --big measures index mode).
  const session = await TraceSession.open(trace, { index: false });
  const server = await startServer({ rendererDir: RENDERER, session, recent: new RecentList(path.join(path.dirname(trace), 'recent.json')) });
  const url = html ? htmlReportOf(session) : server.pageUrl();
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  try {
    const runs: Handle[] = [];
    let page: Page | null = null;
    for (let i = 0; i < 3; i++) {
      await page?.close();
      page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      runs.push(await openOnce(page, url));
    }
    // A picture of the full view, to look at (not committed: test/gui/screenshots is ignored).
    const shots = path.join(packageRoot, 'test', 'gui', 'screenshots');
    mkdirSync(shots, { recursive: true });
    await page!.screenshot({ path: path.join(shots, html ? 'bench-html-report.png' : 'bench-5m-events.png') });
    const first = runs.map((h) => h.timings.firstChart);
    const decode = runs.map((h) => h.timings.decoded - h.timings.bytes);
    const fetchMs = runs.map((h) => h.timings.bytes);
    const { zoom, pan, deepest } = await interact(page!);
    const all = [...zoom, ...pan];
    const over = all.filter((t) => t >= 16).length;
    const mib = statSync(trace).size / 1048576;
    const lines = [
      `trace: ${runs[0]!.events.toLocaleString('en-US')} events, ${mib.toFixed(1)} MiB (${trace})`,
      `${html ? 'HTML report from file://' : 'viewer served on 127.0.0.1'}; first chart, navigation to chart drawn, 3 page loads: median ${(median(first) / 1000).toFixed(2)} s (${first.map((t) => (t / 1000).toFixed(2)).join(', ')}; target < 3 s)`,
      `  of which: page and trace ${html ? 'parsed and the trace decoded from base64' : 'fetched'} ${(median(fetchMs) / 1000).toFixed(2)} s, decoded and summarised in the worker ${(median(decode) / 1000).toFixed(2)} s`,
      `draw time per frame, zooming (40 wheel steps, down to ${deepest} events in view): median ${ms(median(zoom))}, p95 ${ms(quantile(zoom, 0.95))}, max ${ms(Math.max(...zoom))}`,
      `draw time per frame, panning and zooming out (60 drag moves, 50 zoom steps): median ${ms(median(pan))}, p95 ${ms(quantile(pan, 0.95))}, max ${ms(Math.max(...pan))}`,
      `frames at or over 16 ms: ${over} of ${all.length} (target: none)`,
    ];
    process.stdout.write(lines.join('\n') + '\n');
  } finally {
    await browser.close();
    await server.close();
  }
}

main().catch((e: unknown) => {
  process.stderr.write(`bench:gui: ${(e as Error).message}\n`);
  process.exitCode = 1;
});
