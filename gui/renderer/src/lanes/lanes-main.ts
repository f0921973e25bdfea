// The lanes page of `cc-memwrap view A B C…` (or a folder): one lane per process, each the viewer's own chart of its
// memory (stack and static above the axis, heap below), stacked, all on one x axis of wall time: a trace's header
// start time plus its events' times, so a child forked later starts further right. Zooming or panning one lane moves
// them all; a click on a lane (or its name) opens that trace in the viewer.
//
// Traces are fetched and decoded one at a time; a lane keeps only what its chart draws (the series and their
// pyramids, event kinds and times), never the decoded model, so each lane holds less than the viewer does for one trace.
// A trace the viewer would open through its index (the host says so) is never fetched: its lane is drawn from the
// host's index as the viewer draws one (IndexChartData: the bucket summaries, finer ones and the events of the part in
// view fetched as the view narrows) once the index's summaries, built with the buckets' times for it, are there; its
// title's facts are the index's.
import { chartSeries, eventClassMasks } from '../../../../analysis/lod.js';
import { formatCount } from '../../../../analysis/units.js';
import { exactBytes } from '../../../../analysis/compare-text.js';
import type { IndexStatusReply, LanesReply } from '../../../../host/session-types.js';
import { Chart, formatNs } from '../chart/chart.js';
import { chartData, type ChartData } from '../chart/columns.js';
import { decodeInWorker } from '../decode.js';
import { byId, el, fill } from '../dom.js';
import { api, progress, startPage } from '../served-page.js';
import { POLL_MS, serverIndexApi, summariesBuilt } from '../backend.js';
import { IndexChartData } from '../index-view.js';
import { EventsWatch } from '../index-events.js';
import '../styles.css';
import './lanes.css';

/** One process: what its lane shows. */
interface Lane {
  index: number;
  file: string;
  /** "rank 2 · pid 4242", or "pid 4242". */
  label: string;
  program: string;
  facts: string;
  start: bigint;
  data: ChartData;
  kinds: Uint8Array;
  /** A lane drawn from its index: its data, which fetches the part in view. */
  indexed: IndexChartData | null;
}

/** For automation: whether every lane is drawn (or failed), the lanes' labels, and where each one's first event is. */
const handle = {
  ready: false,
  error: null as string | null,
  lanes: [] as { label: string; program: string; file: string; error: string | null }[],
  charts: [] as Chart[],
  /** Viewport x of lane i's first event, or null when out of view or not drawn. */
  firstEventClientX(i: number): number | null {
    return handle.charts[i]?.clientXOf(0) ?? null;
  },
};
(window as unknown as { ccMemwrapLanes: typeof handle }).ccMemwrapLanes = handle;

function basename(p: string): string {
  return p.slice(p.lastIndexOf('/') + 1);
}

/** Lane `index` fetched and decoded, reduced to what its chart draws. */
async function load(index: number, file: string, count: number): Promise<Lane> {
  const bytes = await (await api(`./api/trace?lane=${index}`)).arrayBuffer();
  const view = await decodeInWorker(bytes, null, (phase, fraction) => progress(`${file} (${index + 1} of ${count}): ${phase}`, fraction));
  const m = view.model;
  const s = view.summary;
  return {
    index,
    file,
    label: `${m.rank === null ? '' : `rank ${m.rank.rank} · `}pid ${m.header.pid}`,
    program: m.program === null ? '(program not recorded)' : basename(m.program.path),
    facts: `parent ${m.header.ppid} · ${formatCount(s.events)} events · peak heap ${exactBytes(s.peakHeap.requested.bytes)} · peak stack ${exactBytes(s.peakStack.bytes)}`,
    start: m.header.startTimeNs,
    data: { ...chartData(chartSeries(m, null, view.statics, m.events.heapRequested), eventClassMasks(m), view.times), endsAtLastEvent: true },
    kinds: m.events.kind,
    indexed: null,
  };
}

/**
 * Lane `index` drawn from the host's index of its trace: waits while the host builds the chart's summaries (with the
 * buckets' times, which the wall-time axis needs; a summaries file made without them, by the viewer, waits for the
 * events, which bring them), then draws from them; the events are indexed after them, and a window of events asked
 * for meanwhile is held until they are (index-events.ts).
 */
async function loadIndexed(index: number, file: string, count: number): Promise<Lane> {
  const raw = serverIndexApi(`lane=${index}`);
  const watch = new EventsWatch(raw.status);
  watch.wrap(raw);
  const what = `${file} (${index + 1} of ${count})`;
  const wait = (): Promise<void> => new Promise((r) => setTimeout(r, POLL_MS));
  let status: IndexStatusReply = await summariesBuilt(raw.status, (phase, fraction) => progress(`${what}: indexing, the chart's summaries: ${phase}`, fraction));
  if (status.state === 'failed') throw new Error(status.message);
  const meta = status.meta;
  const data = new IndexChartData(meta, new Float64Array(await raw.summary()), watch.latestWindow());
  if (!data.hasTimes) {
    for (;;) {
      if (status.state !== 'ready') throw new Error(status.state === 'failed' ? status.message : 'the index is being built again');
      if (status.events.state === 'ready') break;
      if (status.events.state === 'failed') throw new Error(`the events could not be indexed: ${status.events.message}`);
      progress(`${what}: indexing, the events (which give the times): ${status.events.phase}`, status.events.fraction);
      await wait();
      status = await raw.status();
    }
    data.takeTimes(new Float64Array(await raw.summary()));
    if (!data.hasTimes) throw new Error("the index's summaries carry no times");
  }
  watch.follow(status.state === 'ready' ? status.events : { state: 'ready', seconds: 0 });
  data.data.endsAtLastEvent = true;
  const p = meta.process;
  return {
    index,
    file,
    label: `${p.rank === null ? '' : `rank ${p.rank.rank} · `}pid ${p.pid}`,
    program: meta.program === null ? '(program not recorded)' : basename(meta.program.path),
    facts: `parent ${p.ppid} · ${formatCount(meta.events)} events · peak heap ${exactBytes(meta.maxHeap)} · peak stack ${exactBytes(meta.maxStack)}`,
    start: BigInt(p.startTimeNs),
    data: data.data,
    kinds: data.kinds,
    indexed: data,
  };
}

/** Opens lane `index`'s trace in the viewer (this tab; Back returns to the lanes). */
async function open(index: number): Promise<void> {
  await api(`./api/open-lane?lane=${index}`, 'POST');
  location.href = './index.html';
}

/** "2026-11-25 18:50:28.123 UTC" */
function wallClock(ns: bigint): string {
  return new Date(Number(ns / 1_000_000n)).toISOString().replace('T', ' ').replace('Z', ' UTC');
}

function laneBox(index: number, head: HTMLElement[], body: HTMLElement[]): HTMLElement {
  return el('section', { class: 'lane', id: `lane-${index}` }, el('h2', { class: 'lane-title' }, ...head), ...body);
}

async function start(): Promise<void> {
  const { lanes: listed } = (await (await api('./api/lanes')).json()) as LanesReply;
  const lanes: Lane[] = [];
  const boxes: HTMLElement[] = [];
  for (const [i, l] of listed.entries()) {
    // A function call per lane, so that nothing of the decoded trace outlives it here.
    try {
      lanes.push(await (l.mode === 'index' ? loadIndexed : load)(i, l.name, listed.length));
      handle.lanes.push({ label: lanes.at(-1)!.label, program: lanes.at(-1)!.program, file: l.name, error: null });
    } catch (e) {
      const message = (e as Error).message;
      handle.lanes.push({ label: '', program: '', file: l.name, error: message });
      boxes[i] = laneBox(i, [el('span', {}, l.name)], [el('p', { class: 'lane-error' }, `not drawn: ${message}`)]);
    }
  }
  progress(null);
  if (lanes.length === 0) throw new Error('no trace could be drawn');
  // One wall-time axis: ns since the earliest start. Differences of the 64-bit start times are exact as numbers
  // (below 2^53 ns, 104 days), where the times since the epoch would not be.
  const first = lanes.reduce((a, l) => (l.start < a ? l.start : a), lanes[0]!.start);
  let end = 1;
  for (const l of lanes) {
    const offset = Number(l.start - first);
    const t = l.data.times;
    if (l.indexed !== null) l.indexed.timeOffset = offset;
    else for (let i = 0; i < t.length; i++) t[i]! += offset;
    end = Math.max(end, (t[t.length - 1] ?? offset) + 1);
  }
  const domain: [number, number] = [0, end];
  // The lanes' labels in the toolbar while they fit in a line; the lanes themselves say the rest.
  fill(byId('lanes-title'), `${listed.length} processes${listed.length <= 8 ? `: ${lanes.map((l) => l.label).join(', ')}` : ''}`);
  fill(byId('lanes-axis'), `x: wall time since the first process started (${wallClock(first)}), to its last event ${formatNs(end)} later; each lane's heights on its own byte scale`);
  document.title = `${listed.length} processes · cc-memwrap`;
  const charts: Chart[] = [];
  for (const l of lanes) {
    const chartHost = el('div', { class: 'chart' });
    const overviewHost = el('div', { class: 'overview' });
    const startsAt = Number(l.start - first);
    boxes[l.index] = laneBox(
      l.index,
      [
        el('button', { type: 'button', title: `Open ${l.file} in the viewer` }, `${l.label} · ${l.program}`),
        el('span', { class: 'lane-facts' }, `${l.file} · started ${startsAt === 0 ? 'first' : `+${formatNs(startsAt)}`} · ${l.facts}`),
      ],
      [chartHost, overviewHost],
    );
    boxes[l.index]!.querySelector('button')!.addEventListener('click', () => void open(l.index));
    const chart = new Chart(chartHost, overviewHost);
    chart.timeDomain = domain;
    chart.onPick = () => void open(l.index);
    charts.push(chart);
  }
  fill(byId('lanes'), ...boxes);
  // Laid out once the lanes are on the page, so each chart takes its lane's width.
  // Lanes drawn from an index ask for the part in view once the view rests a moment (not on every frame of a drag).
  let pending = 0;
  const wantInView = (): void => {
    clearTimeout(pending);
    pending = window.setTimeout(() => {
      for (const [i, l] of lanes.entries()) {
        if (l.indexed === null) continue;
        const [a, b] = charts[i]!.visibleEvents();
        l.indexed.want(a, b);
      }
    }, 40);
  };
  for (const [i, l] of lanes.entries()) {
    charts[i]!.setMode('time');
    charts[i]!.setData(l.data, l.kinds);
    if (l.indexed !== null) l.indexed.onWindow = () => charts[i]!.redraw();
    charts[i]!.onTransform = (t) => {
      for (const other of charts) if (other !== charts[i]) other.follow(t);
      wantInView();
    };
  }
  wantInView();
  byId('whole-run').addEventListener('click', () => charts[0]!.resetZoom());
  document.addEventListener('keydown', (e) => {
    if (e.key === '0') charts[0]!.resetZoom();
  });
  handle.charts = lanes.reduce<Chart[]>((all, l, i) => ((all[l.index] = charts[i]!), all), []);
  handle.ready = true;
}

startPage(start, handle, 'The lanes could not be drawn');
