// The records of a trace file in the global order, read and parsed by a second thread (Node's worker_threads) while
// this one resolves them and runs the folds: the reading half of a pass on another core. The worker runs the same
// reader as one thread does (event-stream.ts: threadStreams and mergeStreams over records.ts), so the records, the
// problems and their order, and the progress calls are the same; only where the work is done changes.
//
// The worker writes each record as a few numbers into batches of a ring of shared memory (RING slots of SLOT numbers,
// so memory is fixed, whatever the trace's length); records of rare kinds (UNIT, PROGRAM, LIBRARY, END, LEAKS …),
// the problems and an error go as messages, each marked in the batch where it belongs. The thread that reads waits on
// the ring with Atomics.wait and takes messages with receiveMessageOnPort: it stays one synchronous loop, as a pass
// by one thread is.
//
// Node only, like file-source.ts: the browser's worker reads bytes in memory, one thread.
import { cpus } from 'node:os';
import { MessageChannel, receiveMessageOnPort, Worker, isMainThread, workerData, type MessagePort } from 'node:worker_threads';
import type { ByteSource } from './byte-source.js';
import { FileSource } from './file-source.js';
import { ExtKind, Kind } from './format.js';
import { readHeader, type TraceHeader } from './header.js';
import { TraceRecord } from './records.js';
import { mergeStreams, threadStreams, type MergedReader, type ThreadStream } from './event-stream.js';
import { ProblemLog, type Severity } from '../problems.js';
import { WORKER_LIMITS } from '../worker-limits.js';

/** Numbers per batch, batches in the ring: 32 MiB of shared memory in all, some 100 ms of the reading thread's work. */
const SLOT = 1 << 19;
const RING = 8;
/** A worker that has filled the ring waits until the reading thread has emptied this many slots (one wake-up each time). */
const REFILL = RING / 2;
/** The most numbers one record written inline takes; a record that would take more goes as a message. */
const MAX_INLINE = 1024;
/** A thread index at or above this goes as a message (an inline record's head holds it in 23 bits). */
const MAX_INLINE_THREAD = 1 << 23;

/** Batch entries that are not records (a record's head is >= 0). */
const MESSAGE = -1;
const PROGRESS = -2;

/**
 * ctrl[]: batches published, batches consumed, the worker has ended (1) or failed (2), the reading thread waits for a
 * batch (1), the worker waits for room (1), then each slot's length. A side wakes the other only when it waits: a
 * wake-up costs more than a batch of records.
 */
const PUBLISHED = 0;
const CONSUMED = 1;
const ENDED = 2;
const MAIN_WAITS = 3;
const WORKER_WAITS = 4;
const LENGTHS = 5;

/** Traces smaller than this are read by one thread: a worker takes some tens of milliseconds to start. */
export const WORKER_MIN_BYTES = 32 << 20;

interface Job {
  kind: 'mwtrace-records';
  fd: number;
  size: number;
  window: number | undefined;
  sourceWindow: number;
  progress: boolean;
  ctrl: SharedArrayBuffer;
  data: SharedArrayBuffer;
  port: MessagePort;
}

type ProblemMessage = { problem: [code: string, severity: Severity, offset: number | null, thread: number | null, message: string] };
type Message =
  | ProblemMessage
  | { record: Partial<TraceRecord> }
  | { threads: number[]; problems: ProblemMessage['problem'][] }
  | { error: { message: string; code?: string; name: string } };

/** How long the processors are watched for an idle one, and how much of one must be idle. */
const IDLE_SAMPLE_MS = 100;
const IDLE_CORE = 0.75;

/**
 * Processor time left idle over a short while, in processors (os.cpus(), summed over all of them). A second thread
 * pays only where a processor is free: where other work keeps every one busy, the scheduler's share of this process
 * is the same with two threads as with one, and handing the records over costs CPU time.
 */
function idleProcessors(): number {
  const total = (): { idle: number; all: number } => {
    let idle = 0;
    let all = 0;
    for (const c of cpus()) {
      idle += c.times.idle;
      all += c.times.user + c.times.nice + c.times.sys + c.times.idle + c.times.irq;
    }
    return { idle, all };
  };
  const a = total();
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, IDLE_SAMPLE_MS);
  const b = total();
  const n = cpus().length;
  return b.all > a.all ? (n * (b.idle - a.idle)) / (b.all - a.all) : 0;
}

/**
 * A reader of `source`'s records on a worker thread, or null: when this source cannot be read there (not a file), is
 * too small for it to pay (`minBytes`), or no processor is idle enough (`idleProcessors`). MEMWRAP_READ_WORKER=0
 * never uses one, =1 always (for files).
 */
export function recordWorker(source: ByteSource, header: TraceHeader, window: number | undefined, minBytes = WORKER_MIN_BYTES): MergedReader | null {
  const choice = process.env.MEMWRAP_READ_WORKER;
  // The worker runs this module compiled (dist/); run from its TypeScript source (tests), one thread reads.
  if (choice === '0' || !(source instanceof FileSource) || !import.meta.url.endsWith('.js')) return null;
  if (choice !== '1' && (source.size < minBytes || idleProcessors() < IDLE_CORE)) return null;
  try {
    return new WorkerReader(source, header, window);
  } catch {
    // No thread could be started (ERR_WORKER_INIT_FAILED, resource limits): this one reads.
    return null;
  }
}

/** Problems kept until `forwardTo` names where they go, then passed on as they come. */
class ForwardedProblems extends ProblemLog {
  private readonly early: ProblemMessage['problem'][] = [];
  private target: { add(...p: ProblemMessage['problem']): void } | null = null;

  override add(code: string, severity: Severity, offset: number | null, thread: number | null, message: string): void {
    if (this.target === null) this.early.push([code, severity, offset, thread, message]);
    else this.target.add(code, severity, offset, thread, message);
  }

  forwardTo(target: { add(...p: ProblemMessage['problem']): void }): void {
    this.target = target;
    for (const p of this.early) target.add(...p);
    this.early.length = 0;
  }

  /** The problems kept so far, handed over. */
  takeEarly(): ProblemMessage['problem'][] {
    return this.early.splice(0);
  }
}

/** How long the worker may take to start and read the chunk headers before this thread reads the trace itself. */
const START_TIMEOUT_MS = 30_000;
/** One wait of the reading thread for the next batch. */
const WAIT_MS = 100;
/** Waits without a batch, in ms, after which the worker is taken for dead (a batch takes milliseconds to fill). */
const SILENCE_MS = 60_000;

class WorkerReader implements MergedReader {
  private readonly worker: Worker;
  private readonly port: MessagePort;
  private readonly ctrl: Int32Array;
  private readonly data: Float64Array;
  private started: { threads: number[]; problems: ProblemMessage['problem'][] } | null = null;
  private closed = false;
  /** The worker said nothing in START_TIMEOUT_MS: this thread's own streams and their problems instead. */
  private local: { streams: ThreadStream[]; problems: ForwardedProblems } | null = null;

  constructor(
    private readonly source: FileSource,
    private readonly header: TraceHeader,
    private readonly window: number | undefined,
  ) {
    const ctrl = new SharedArrayBuffer(4 * (LENGTHS + RING));
    const data = new SharedArrayBuffer(8 * SLOT * RING);
    this.ctrl = new Int32Array(ctrl);
    this.data = new Float64Array(data);
    const channel = new MessageChannel();
    this.port = channel.port1;
    const job: Job = {
      kind: 'mwtrace-records',
      fd: source.descriptor,
      size: source.size,
      window,
      sourceWindow: source.window,
      progress: true,
      ctrl,
      data,
      port: channel.port2,
    };
    this.worker = new Worker(new URL(import.meta.url), { workerData: job, transferList: [channel.port2], resourceLimits: WORKER_LIMITS });
    // The worker never keeps the process alive: the pass waits for it, and an early end of the command ends it.
    this.worker.unref();
  }

  /** The next message, which the worker posted before it published the batch that marks it; null after `timeout` ms. */
  private message(timeout = Infinity): Message | null {
    const until = performance.now() + timeout;
    for (let ended = false; ; ) {
      const m = receiveMessageOnPort(this.port);
      if (m !== undefined) return m.message as Message;
      // Once the worker has ended, everything it posted can be received: one more look, then it said nothing.
      if (ended) throw new Error('the thread reading the trace ended without a word');
      if (performance.now() > until) return null;
      ended = Atomics.load(this.ctrl, ENDED) !== 0;
      if (!ended) Atomics.wait(this.ctrl, ENDED, 0, 1);
    }
  }

  private start(): { threads: number[]; problems: ProblemMessage['problem'][] } {
    if (this.started === null) {
      const m = this.message(START_TIMEOUT_MS);
      if (m === null) {
        // A worker that cannot even start in that time is of no help: this thread reads, from the start.
        this.close();
        const problems = new ForwardedProblems();
        const streams = threadStreams(this.source, this.header, problems, this.window);
        this.local = { streams, problems };
        this.started = { threads: streams.map((s) => s.index), problems: [] };
        return this.started;
      }
      if ('error' in m) this.fail(m.error);
      if (!('threads' in m)) throw new Error('the trace reading thread answered out of turn');
      this.started = m;
    }
    return this.started;
  }

  get threads(): number[] {
    return this.start().threads;
  }

  private fail(error: { message: string; code?: string; name: string }): never {
    this.close();
    throw Object.assign(new Error(error.message), error.code === undefined ? {} : { code: error.code });
  }

  run(problems: ProblemLog, visit: (r: TraceRecord) => void, onProgress?: (done: number, total: number) => void): void {
    for (const p of this.start().problems) problems.add(...p);
    if (this.local !== null) {
      this.local.problems.forwardTo(problems);
      mergeStreams(this.local.streams, this.source.size, visit, onProgress);
      return;
    }
    const ctrl = this.ctrl;
    const d = this.data;
    const r = new TraceRecord();
    let consumed = 0;
    let silent = 0;
    for (;;) {
      // Wait for the next batch, or the worker's end.
      while (Atomics.load(ctrl, PUBLISHED) === consumed) {
        const ended = Atomics.load(ctrl, ENDED);
        if (ended !== 0 && Atomics.load(ctrl, PUBLISHED) === consumed) {
          if (ended === 2) {
            const m = this.message();
            if (m !== null && 'error' in m) this.fail(m.error);
          }
          this.close();
          return;
        }
        Atomics.store(ctrl, MAIN_WAITS, 1);
        if (Atomics.load(ctrl, PUBLISHED) === consumed && Atomics.load(ctrl, ENDED) === 0 && Atomics.wait(ctrl, PUBLISHED, consumed, WAIT_MS) === 'timed-out') {
          // This loop never returns to the event loop, so a worker that died without a word (out of memory, say)
          // shows only as silence. Counted in waits, not by the clock: a process stopped and resumed (Ctrl-Z) is
          // not silence.
          if (++silent * WAIT_MS >= SILENCE_MS) this.fail({ name: 'Error', message: `the thread reading the trace has said nothing for ${SILENCE_MS / 1000} s` });
        } else silent = 0;
        Atomics.store(ctrl, MAIN_WAITS, 0);
      }
      silent = 0;
      const slot = consumed % RING;
      let p = slot * SLOT;
      const end = p + ctrl[LENGTHS + slot]!;
      while (p < end) {
        const head = d[p]!;
        if (head < 0) {
          if (head === PROGRESS) {
            onProgress?.(d[p + 1]!, d[p + 2]!);
            p += 3;
            continue;
          }
          p += 1;
          const m = this.message()!;
          if ('problem' in m) problems.add(...m.problem);
          else if ('record' in m) visit(Object.assign(new TraceRecord(), m.record));
          else if ('error' in m) this.fail(m.error);
          continue;
        }
        p = CODEC.read(d, p, head, r);
        visit(r);
      }
      consumed++;
      Atomics.store(ctrl, CONSUMED, consumed);
      if (Atomics.load(ctrl, WORKER_WAITS) === 1 && Atomics.load(ctrl, PUBLISHED) - consumed <= REFILL) Atomics.notify(ctrl, CONSUMED);
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.port.close();
    void this.worker.terminate();
  }
}

/**
 * The ring's layout, the one place it is said: the fields of each record kind the ring carries inline (EXT records by
 * subkind), in order, after the record's head (kind, flags and thread in one number) and its offset, and for EXT its
 * subkind. `name` is a number; `name?` a flag (1 or 0); `name[]` a list, its length first; `a[]b[]` two lists of one
 * length, the length then the first's items then the second's. Kinds and subkinds not here (UNIT, PROGRAM, END,
 * THREAD_BEGIN, LEAKS, LIBRARY, RANK …: rare) go as messages. The fields are those resolve-stream.ts reads of them.
 */
const RING_LAYOUT: { kinds: Record<number, readonly string[]>; ext: Record<number, readonly string[]> } = {
  kinds: {
    [Kind.ENTER]: ['site', 'depth'],
    [Kind.EXIT]: ['site'],
    [Kind.ALLOC]: ['seq', 'site', 'fn', 'size', 'address', 'usable', 'block'],
    [Kind.REALLOC]: ['seq', 'site', 'fn', 'size', 'address', 'usable', 'block'],
    [Kind.FREE]: ['seq', 'site', 'fn', 'address', 'block'],
    [Kind.TIME]: ['time'],
    [Kind.UNWIND]: ['count'],
    [Kind.LOST]: ['count'],
    [Kind.STATIC]: ['site', 'address', 'size'],
    [Kind.THREAD_END]: [],
    [Kind.LINKED]: ['ids[]', 'partial?'],
  },
  ext: {
    [ExtKind.BRANCH]: ['site', 'taken'],
    [ExtKind.CALLER]: ['library'],
    [ExtKind.CALL_PATH]: ['pathFlags', 'pathLibs[]pathOffsets[]'],
  },
};

/** One field of the layout as code: its numbers' count, its write and its read (d: the ring, q: where it starts). */
function fieldCode(field: string): { size: string; write: string; read: string } {
  const pair = /^(\w+)\[\](\w+)\[\]$/.exec(field);
  if (pair) {
    const [, a, b] = pair;
    return {
      size: `1 + 2 * r.${a}.length`,
      write: `{ const n = r.${a}.length; d[q++] = n; for (let i = 0; i < n; i++) d[q++] = r.${a}[i]; for (let i = 0; i < n; i++) d[q++] = r.${b}[i]; }`,
      read: `{ const n = d[q++]; const x = new Array(n), y = new Array(n); for (let i = 0; i < n; i++) x[i] = d[q + i]; for (let i = 0; i < n; i++) y[i] = d[q + n + i]; q += 2 * n; r.${a} = x; r.${b} = y; }`,
    };
  }
  const list = /^(\w+)\[\]$/.exec(field);
  if (list) {
    const a = list[1];
    return {
      size: `1 + r.${a}.length`,
      write: `{ const n = r.${a}.length; d[q++] = n; for (let i = 0; i < n; i++) d[q++] = r.${a}[i]; }`,
      read: `{ const n = d[q++]; const x = new Array(n); for (let i = 0; i < n; i++) x[i] = d[q + i]; q += n; r.${a} = x; }`,
    };
  }
  const flag = /^(\w+)\?$/.exec(field);
  if (flag) return { size: '1', write: `d[q++] = r.${flag[1]} ? 1 : 0;`, read: `r.${flag[1]} = d[q++] === 1;` };
  return { size: '1', write: `d[q++] = r.${field};`, read: `r.${field} = d[q++];` };
}

/** The code of one kind's (or subkind's) size, write and read, its fields' in order. */
function kindCode(fields: readonly string[], fixed: number): { size: string; write: string; read: string } {
  const codes = fields.map(fieldCode);
  return {
    size: [String(fixed), ...codes.map((c) => c.size)].join(' + '),
    write: codes.map((c) => c.write).join(' '),
    read: codes.map((c) => c.read).join(' '),
  };
}

interface RingCodec {
  /** How many numbers `r` takes inline, or -1 when it goes as a message. */
  size(r: TraceRecord): number;
  /** Writes `r` at `p` (the room checked: `size(r)` numbers). */
  write(d: Float64Array, p: number, r: TraceRecord): void;
  /** Reads the record at `p` (its head already read) into `r`; returns where the next entry starts. */
  read(d: Float64Array, p: number, head: number, r: TraceRecord): number;
}

/**
 * RING_LAYOUT compiled to straight-line code, one branch per kind: the ring is read for every record of a large trace,
 * as fast as a hand-written switch, and the layout is said once.
 */
function compileRing(): RingCodec {
  const sizes: string[] = [];
  const writes: string[] = [];
  const reads: string[] = [];
  for (const [kind, fields] of Object.entries(RING_LAYOUT.kinds)) {
    const c = kindCode(fields, 2);
    sizes.push(`if (k === ${kind}) return ${c.size};`);
    writes.push(`if (k === ${kind}) { ${c.write} return; }`);
    reads.push(`if (k === ${kind}) { ${c.read} return q; }`);
  }
  const extSizes: string[] = [];
  const extWrites: string[] = [];
  const extReads: string[] = [];
  for (const [sub, fields] of Object.entries(RING_LAYOUT.ext)) {
    const c = kindCode(fields, 3);
    extSizes.push(`if (s === ${sub}) return ${c.size};`);
    extWrites.push(`if (s === ${sub}) { ${c.write} return; }`);
    extReads.push(`if (s === ${sub}) { ${c.read} return q; }`);
  }
  const ext = Kind.EXT;
  const size = new Function('r', `const k = r.kind; ${sizes.join(' ')} if (k === ${ext}) { const s = r.subkind; ${extSizes.join(' ')} } return -1;`);
  const write = new Function(
    'd',
    'p',
    'r',
    `const k = r.kind; d[p] = k + 16 * r.flags + 256 * r.thread; d[p + 1] = r.offset; let q = p + 2; ${writes.join(' ')} if (k === ${ext}) { const s = r.subkind; d[q++] = s; ${extWrites.join(' ')} }`,
  );
  const read = new Function(
    'd',
    'p',
    'head',
    'r',
    `const h = head | 0; const k = h & 15; r.kind = k; r.flags = (h >> 4) & 15; r.thread = h >>> 8; r.offset = d[p + 1]; let q = p + 2; ${reads.join(' ')} const s = d[q++]; r.subkind = s; ${extReads.join(' ')} return q;`,
  );
  return { size: size as RingCodec['size'], write: write as RingCodec['write'], read: read as RingCodec['read'] };
}

const CODEC = compileRing();

/** How many numbers `r` takes inline, or -1 when it goes as a message (a thread index too large, a list too long). */
function inlineSize(r: TraceRecord): number {
  if (r.thread >= MAX_INLINE_THREAD) return -1;
  const n = CODEC.size(r);
  return n <= MAX_INLINE ? n : -1;
}

/** The fields of a record that goes as a message (structured clone keeps the plain fields). */
function recordMessage(r: TraceRecord): Partial<TraceRecord> {
  return { ...r, ids: r.ids.slice(), classes: r.classes.slice(), pathLibs: r.pathLibs.slice(), pathOffsets: r.pathOffsets.slice() };
}

/** The worker's side: reads every record as one thread would and writes them to the ring. */
function workerMain(job: Job): void {
  const ctrl = new Int32Array(job.ctrl);
  const d = new Float64Array(job.data);
  const port = job.port;
  let published = 0;
  let slotStart = 0;
  let p = 0;

  const publish = (): void => {
    ctrl[LENGTHS + (published % RING)] = p - slotStart;
    published++;
    Atomics.store(ctrl, PUBLISHED, published);
    if (Atomics.load(ctrl, MAIN_WAITS) === 1) Atomics.notify(ctrl, PUBLISHED);
    // At most RING batches ahead of the reading thread: once the ring is full, wait until REFILL slots are free.
    if (published - Atomics.load(ctrl, CONSUMED) >= RING) {
      Atomics.store(ctrl, WORKER_WAITS, 1);
      for (;;) {
        const consumed = Atomics.load(ctrl, CONSUMED);
        if (published - consumed <= REFILL) break;
        Atomics.wait(ctrl, CONSUMED, consumed, 100);
      }
      Atomics.store(ctrl, WORKER_WAITS, 0);
    }
    slotStart = (published % RING) * SLOT;
    p = slotStart;
  };
  const room = (n: number): void => {
    if (p + n > slotStart + SLOT) publish();
  };
  const post = (m: Message): void => {
    room(1);
    port.postMessage(m);
    d[p++] = MESSAGE;
  };

  try {
    const source = FileSource.ofDescriptor(job.fd, job.size, job.sourceWindow);
    const header = readHeader(source);
    // The chunk headers' problems and those of each thread's first record go with the thread list, the rest in place.
    const problems = new ForwardedProblems();
    const streams = threadStreams(source, header, problems, job.window);
    port.postMessage({ threads: streams.map((s) => s.index), problems: problems.takeEarly() } satisfies Message);
    problems.forwardTo({ add: (...problem) => post({ problem }) });
    mergeStreams(
      streams,
      source.size,
      (r) => {
        if (r.ignored) return;
        const n = inlineSize(r);
        if (n < 0) {
          post({ record: recordMessage(r) });
          return;
        }
        room(n);
        CODEC.write(d, p, r);
        p += n;
      },
      job.progress
        ? (done, total) => {
            room(3);
            d[p] = PROGRESS;
            d[p + 1] = done;
            d[p + 2] = total;
            p += 3;
          }
        : undefined,
    );
    if (p > slotStart) publish();
    Atomics.store(ctrl, ENDED, 1);
  } catch (e) {
    const err = e as Error & { code?: string };
    port.postMessage({ error: { message: err?.message ?? String(e), name: err?.name ?? 'Error', ...(err?.code === undefined ? {} : { code: err.code }) } } satisfies Message);
    if (p > slotStart) publish();
    Atomics.store(ctrl, ENDED, 2);
  }
  Atomics.notify(ctrl, PUBLISHED);
  Atomics.notify(ctrl, ENDED);
}

if (!isMainThread && (workerData as Job | null)?.kind === 'mwtrace-records') workerMain(workerData as Job);
