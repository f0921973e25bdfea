// `cc-memwrap export <trace> --format massif|csv`: the memory timeline of a run as a Massif file (for ms_print) or as CSV.
import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { readTraceFile } from '../analysis/trace/read-file.js';
import { exportMassif } from '../analysis/export-massif.js';
import { exportCsv } from '../analysis/export-csv.js';
import { IntervalError, intervalSeries, type IntervalSpec } from '../analysis/timeline.js';
import { describeReadError } from '../host/read-errors.js';
import { processIo, progressLine, type CliIo } from './io.js';

export const EXPORT_FORMATS = ['massif', 'csv'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** Massif files hold at most this many snapshots (Massif's own --max-snapshots limit). */
export const MAX_MASSIF_SNAPSHOTS = 1000;

/** Rows of CSV without --interval: about this many intervals of events. */
const DEFAULT_CSV_ROWS = 1000;

export const EXPORT_HELP = `Usage: cc-memwrap export <trace> --format massif|csv [--interval N|TIME]
                          [-o FILE]

Writes the memory a run used over time: heap bytes requested and usable,
stack bytes (all threads) and static bytes, after each event or per interval.

Formats:
  massif     a Valgrind Massif file: read it with ms_print FILE or
             massif-visualizer. time= is the event index (time_unit: i);
             100 snapshots evenly over the run plus the peak (heap usable +
             stack); the peak and every 10th snapshot list the live heap
             bytes by allocation site
  csv        header "event,time_ns,heap_requested,heap_usable,stack,static",
             then one row per interval (about 1000 rows by default): values
             after the interval's last event (analysis/README.md)

Options:
  -f, --format F   massif or csv (required)
  --interval N     N events per interval (--interval 1: every event)
  --interval TIME  intervals of wall time: 500ns, 20us, 10ms, 1.5s
                   (massif: one snapshot at the end of each interval,
                   at most ${MAX_MASSIF_SNAPSHOTS})
  -o, --output F   write to file F instead of stdout
  -h, --help       this text

Problems found in the trace are printed on stderr as warnings; the export is
still written (exit 0). Bad arguments, or a file that cannot be read or is not
a trace: one line on stderr, exit 2.`;

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
  if (values.format === undefined) return fail(`--format is required: ${EXPORT_FORMATS.join(' or ')}`);
  if (!(EXPORT_FORMATS as readonly string[]).includes(values.format)) {
    return fail(`--format wants ${EXPORT_FORMATS.join(' or ')}, got '${values.format}'`);
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

  const file = positionals[0]!;
  const progress = progressLine(io, file);
  let model;
  try {
    model = await readTraceFile(file, { onProgress: progress.update });
  } catch (e) {
    progress.done();
    return fail(describeReadError(file, e));
  }
  progress.done();
  for (const p of model.problems) io.err(`cc-memwrap export: ${file}: ${p.severity}: ${p.message}\n`);

  let text: string;
  try {
    if (format === 'csv') {
      text = exportCsv(model, spec ?? { every: Math.max(1, Math.ceil(model.events.count / DEFAULT_CSV_ROWS)), unit: 'events' });
    } else {
      const options = { desc: `cc-memwrap export --format massif ${file}` };
      if (spec === null) {
        text = exportMassif(model, options);
      } else {
        const s = intervalSeries(model, spec);
        const events: number[] = [];
        for (let k = 0; k < s.count; k++) {
          const e = s.endEvent[k]!;
          if (e >= 0 && e !== events[events.length - 1]) events.push(e);
        }
        if (events.length > MAX_MASSIF_SNAPSHOTS) {
          return fail(`--interval ${values.interval} makes ${events.length} snapshots; a Massif file holds at most ${MAX_MASSIF_SNAPSHOTS}: use a larger interval`);
        }
        text = exportMassif(model, { ...options, events });
      }
    }
  } catch (e) {
    if (e instanceof IntervalError) return fail(`--interval ${values.interval}: ${e.message}`);
    throw e;
  }

  if (values.output !== undefined) {
    try {
      await writeFile(values.output, text);
    } catch (e) {
      return fail(`cannot write ${values.output}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
  } else {
    io.out(text);
    await io.flush();
  }
  return 0;
}
