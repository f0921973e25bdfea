// `cc-memwrap export <trace> --format massif|csv|folded|speedscope`: the memory timeline of a run as a Massif file (for
// ms_print) or as CSV; or heap and stack by call path as folded stacks (flame graph tools) or a speedscope file.
import path from 'node:path';
import { parseArgs } from 'node:util';
import { TraceFile } from '../host/trace-file.js';
import { writeWholeFile } from '../host/whole-file.js';
import { MassifFold, type MassifOptions } from '../analysis/export-massif.js';
import { CsvFold } from '../analysis/export-csv.js';
import { IntervalError, IntervalFold, type IntervalSpec } from '../analysis/timeline.js';
import { describeReadError } from '../host/read-errors.js';
import { CALL_PATH_METRICS, DEEPER_FRAMES, MAX_PATH_DEPTH, METRIC_MEANING, callPaths, type CallPathMetric } from '../analysis/call-paths.js';
import { foldedLines, speedscopeJson } from '../analysis/export-call-paths.js';
import { processIo, progressLine, type CliIo } from './io.js';
import { recordWorker } from '../analysis/trace/record-worker.js';

export const EXPORT_FORMATS = ['massif', 'csv', 'folded', 'speedscope'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** Massif files hold at most this many snapshots (Massif's own --max-snapshots limit). */
export const MAX_MASSIF_SNAPSHOTS = 1000;

/** Rows of CSV without --interval: about this many intervals of events. */
const DEFAULT_CSV_ROWS = 1000;

export const EXPORT_HELP = `Usage: cc-memwrap export <trace> --format massif|csv [--interval N|TIME]
                          [-o FILE]
       cc-memwrap export <trace> --format folded [--metric M] [-o FILE]
       cc-memwrap export <trace> --format speedscope [-o FILE]

Writes the memory a run used over time: heap bytes requested and usable,
stack bytes (all threads) and static bytes, after each event or per interval.
Or heap and stack by call path (functions of the open frames, outermost
first), for flame graph tools and speedscope.

Formats:
  massif     a Valgrind Massif file: read it with ms_print FILE or
             massif-visualizer. time= is the event index (time_unit: i);
             100 snapshots evenly over the run plus the peak (heap usable +
             stack); the peak and every 10th snapshot list the live heap
             bytes by allocation site
  csv        header "event,time_ns,heap_requested,heap_usable,stack,static",
             then one row per interval (about 1000 rows by default): values
             after the interval's last event (analysis/README.md)
  folded     one line per call path, "main;insert;new_node 144": the
             path's own value of one metric (--metric), as flamegraph.pl,
             inferno and speedscope read it. Allocations inside libc or
             uninstrumented code end in the frame "(libc or uninstrumented
             code)" below the function that was running. Paths are cut
             at ${MAX_PATH_DEPTH} frames (a deep recursion): the frames below are
             summed into one, "${DEEPER_FRAMES}", and a note
             on stderr says how many
  speedscope speedscope's JSON file format: one profile per metric

Metrics (--metric, folded; default allocated):
${CALL_PATH_METRICS.map((m) => wrap(`  ${m.padEnd(10)} ${METRIC_MEANING[m]}`, 13)).join('\n')}

Options:
  -f, --format F   massif, csv, folded or speedscope (required)
  --metric M       folded: ${CALL_PATH_METRICS.join(', ')}
  --interval N     N events per interval (--interval 1: every event)
  --interval TIME  intervals of wall time: 500ns, 20us, 10ms, 1.5s
                   (massif: one snapshot at the end of each interval,
                   at most ${MAX_MASSIF_SNAPSHOTS})
  -o, --output F   write to file F instead of stdout
  -h, --help       this text

Problems found in the trace are printed on stderr as warnings; the export is
still written (exit 0). Bad arguments, or a file that cannot be read or is not
a trace: one line on stderr, exit 2.`;

/** `text` cut into lines of at most 78 columns at spaces, the lines after the first indented by `indent`. */
function wrap(text: string, indent: number): string {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/(?<=\S) (?=\S)/)) {
    if (line !== '' && line.length + 1 + word.length > 78) {
      lines.push(line);
      line = ' '.repeat(indent) + word.trimStart();
    } else line = line === '' ? word : `${line} ${word}`;
  }
  return [...lines, line].join('\n');
}

const TIME_UNITS: Record<string, number> = { ns: 1, us: 1e3, 'µs': 1e3, ms: 1e6, s: 1e9 };

/** "1000" → 1000 events; "10ms" → 1e7 ns; null if neither. */
export function parseInterval(text: string): IntervalSpec | null {
  if (/^\d+$/.test(text)) {
    const every = Number(text);
    return Number.isSafeInteger(every) && every > 0 ? { every, unit: 'events' } : null;
  }
  const m = /^(\d+(?:\.\d+)?|\.\d+)(ns|us|µs|ms|s)$/.exec(text);
  if (m === null) return null;
  const every = Number(m[1]) * TIME_UNITS[m[2]!]!;
  return Number.isFinite(every) && every > 0 ? { every, unit: 'time' } : null;
}

export async function runExport(args: string[], io: CliIo = processIo()): Promise<number> {
  const fail = (message: string, hint = false): number => {
    io.err(`cc-memwrap export: ${message}\n${hint ? "Try 'cc-memwrap export --help'.\n" : ''}`);
    return 2;
  };
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: {
        format: { type: 'string', short: 'f' },
        interval: { type: 'string' },
        metric: { type: 'string' },
        output: { type: 'string', short: 'o' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (e) {
    return fail((e as Error).message, true);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.out(EXPORT_HELP + '\n');
    await io.flush();
    return 0;
  }
  if (positionals.length !== 1) return fail(`expected one trace file, got ${positionals.length}`, true);
  const formats = `${EXPORT_FORMATS.slice(0, -1).join(', ')} or ${EXPORT_FORMATS[EXPORT_FORMATS.length - 1]}`;
  if (values.format === undefined) return fail(`--format is required: ${formats}`);
  if (!(EXPORT_FORMATS as readonly string[]).includes(values.format)) {
    return fail(`--format wants ${formats}, got '${values.format}'`);
  }
  const format = values.format as ExportFormat;
  let spec: IntervalSpec | null = null;
  if (values.interval !== undefined) {
    spec = parseInterval(values.interval);
    if (spec === null) {
      return fail(`--interval wants a number of events (1000) or a time (500ns, 20us, 10ms, 1.5s), got '${values.interval}'`);
    }
  }
  if (values.output === '') return fail('-o wants a file name');
  if (values.metric !== undefined && format !== 'folded') return fail(`--metric goes with --format folded (speedscope files hold every metric)`);
  if (values.metric !== undefined && !(CALL_PATH_METRICS as readonly string[]).includes(values.metric)) {
    return fail(`--metric wants ${CALL_PATH_METRICS.join(', ')}, got '${values.metric}'`);
  }
  if (spec !== null && (format === 'folded' || format === 'speedscope')) return fail(`--interval goes with --format massif or csv`);

  const file = positionals[0]!;
  let trace: TraceFile;
  try {
    trace = await TraceFile.read(file);
  } catch (e) {
    return fail(describeReadError(file, e));
  }
  const progress = progressLine(io, file, trace.size);
  let text: string | Iterable<string>;
  try {
    const source = trace.stream({ onProgress: progress.update, reader: recordWorker });
    let end;
    if (format === 'folded' || format === 'speedscope') {
      const metric = (values.metric ?? 'allocated') as CallPathMetric;
      const paths = callPaths(source, { peak: format === 'speedscope' || metric === 'peak' });
      end = paths.end;
      if (paths.folded > 0) {
        io.err(`cc-memwrap export: ${file}: call paths deeper than ${MAX_PATH_DEPTH} frames are cut there: the ${paths.folded.toLocaleString('en-US')} frames entered below are summed into "${DEEPER_FRAMES}"\n`);
      }
      text = format === 'folded' ? foldedLines(paths.root, metric) : speedscopeJson(paths.root, path.basename(file), 'cc-memwrap');
    } else if (format === 'csv') {
      let csv: CsvFold | null = null;
      end = source.run((start) => {
        // The default interval comes from the event count: a fold that asks for it has the trace counted first.
        if (spec === null && start.events < 0) return [{ needsEventCount: true, event: () => {} }];
        return [(csv = new CsvFold(start, spec ?? { every: Math.max(1, Math.ceil(start.events / DEFAULT_CSV_ROWS)), unit: 'events' }))];
      });
      text = csv!.result();
    } else {
      const options: MassifOptions = { desc: `cc-memwrap export --format massif ${file}` };
      if (spec !== null) {
        // The snapshots at the intervals' ends: a pass of its own before the Massif file's.
        let intervals: IntervalFold | null = null;
        source.run((start) => [(intervals = new IntervalFold(start, spec))]);
        const s = intervals!.result();
        const events: number[] = [];
        for (let k = 0; k < s.count; k++) {
          const e = s.endEvent[k]!;
          if (e >= 0 && e !== events[events.length - 1]) events.push(e);
        }
        if (events.length > MAX_MASSIF_SNAPSHOTS) {
          return fail(`--interval ${values.interval} makes ${events.length} snapshots; a Massif file holds at most ${MAX_MASSIF_SNAPSHOTS}: use a larger interval`);
        }
        options.events = events;
      }
      let massif: MassifFold | null = null;
      end = source.run((start) => [(massif = new MassifFold(start, options))]);
      text = massif!.result();
    }
    for (const p of end.problems) io.err(`cc-memwrap export: ${file}: ${p.severity}: ${p.message}\n`);
  } catch (e) {
    if (e instanceof IntervalError) return fail(`--interval ${values.interval}: ${e.message}`);
    return fail(describeReadError(file, e));
  } finally {
    progress.done();
    trace.close();
  }

  return writeOut(text);

  async function writeOut(text: string | Iterable<string>): Promise<number> {
    if (values.output !== undefined) {
      try {
        writeWholeFile(values.output, text);
      } catch (e) {
        return fail(`cannot write ${values.output}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
      }
    } else if (typeof text === 'string') {
      io.out(text);
      await io.flush();
    } else {
      // Pieces go out as they come, the buffer flushed now and then (its backpressure keeps memory flat).
      let size = 0;
      for (const piece of text) {
        io.out(piece);
        size += piece.length;
        if (size >= 1 << 20) {
          await io.flush();
          size = 0;
        }
      }
      await io.flush();
    }
    return 0;
  }
}
