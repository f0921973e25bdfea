// `cc-memwrap report <trace>`: decode a trace and print what the run allocated, freed, leaked and peaked at, as text or JSON.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { readTraceFile } from '../analysis/trace/read-file.js';
import { summarize, SUMMARY_SCHEMA } from '../analysis/summary.js';
import { renderAttribution, renderLinked, renderPeaks, renderReport } from '../analysis/report-text.js';
import { limitSnapshot, peaks, sourceLineText } from '../analysis/peak.js';
import { linkedFrees, orphanedLeaks } from '../analysis/linked.js';
import { attribution, ATTRIBUTION_BY, ATTRIBUTION_MODES, type AttributionBy, type AttributionMode } from '../analysis/attribution.js';
import { describeReadError, processIo, progressLine, type CliIo } from './io.js';

export const REPORT_HELP = `Usage: cc-memwrap report <trace> [--top N] [--json] [--peak] [--linked]
                          [--by function|site|file|thread [--attribute MODE]]

Reads a trace (.mwtrace) an instrumented program wrote and prints how the run
ended, threads, events, allocations and frees, bytes allocated (requested and
usable), peak heap and stack, static memory, blocks leaked at exit, the
Valgrind-style totals, and the top allocation sites with file:line.

Options:
  --top N    list the N allocation sites with the most bytes (default 10);
             also limits the --by, --peak and --linked tables
  --json     print the same numbers as one JSON object (schema: analysis/README.md)
  --by G     also print heap bytes and allocator calls grouped by G: function,
             site (allocation or free site), file or thread. Each row: net
             bytes (allocated - freed by its calls; negative when it frees
             what others allocated), min and max of that over the run, and
             the malloc, calloc, realloc, free, aligned and strdup calls
  --attribute MODE
             which function on the call path a heap call is charged to, for
             --by function and --by file: innermost (default), outermost
             (the one called from main), inclusive (every function on it)
  --peak     also print the heap blocks live at the heap peak and at the
             total peak (heap + stack + static), by allocation site (with
             the source line of each site) and by function, with their share
             of the peak
  --linked   also print every free whose freed block still pointed to live
             blocks: the free's site, the freed block's allocation site and
             each linked block's, marked "orphaned" where that free left it
             unreachable for good (never freed afterwards)
  -h, --help this text

Problems found in the trace are printed on stderr as warnings; the report is
still printed (exit 0). A file that cannot be read or is not a trace: exit 2.`;

export async function runReport(args: string[], io: CliIo = processIo()): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: {
        top: { type: 'string' },
        json: { type: 'boolean' },
        by: { type: 'string' },
        attribute: { type: 'string' },
        peak: { type: 'boolean' },
        linked: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (e) {
    io.err(`cc-memwrap report: ${(e as Error).message}\nTry 'cc-memwrap report --help'.\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.out(REPORT_HELP + '\n');
    await io.flush();
    return 0;
  }
  if (positionals.length !== 1) {
    io.err(`cc-memwrap report: expected one trace file, got ${positionals.length}\nTry 'cc-memwrap report --help'.\n`);
    return 2;
  }
  let top = 10;
  if (values.top !== undefined) {
    top = Number(values.top);
    if (!/^\d+$/.test(values.top) || !Number.isSafeInteger(top)) {
      io.err(`cc-memwrap report: --top wants a whole number, got '${values.top}'\n`);
      return 2;
    }
  }
  let by: AttributionBy | null = null;
  if (values.by !== undefined) {
    if (!(ATTRIBUTION_BY as readonly string[]).includes(values.by)) {
      io.err(`cc-memwrap report: --by wants ${ATTRIBUTION_BY.join(', ')}, got '${values.by}'\n`);
      return 2;
    }
    by = values.by as AttributionBy;
  }
  let mode: AttributionMode = 'innermost';
  if (values.attribute !== undefined) {
    if (!(ATTRIBUTION_MODES as readonly string[]).includes(values.attribute)) {
      io.err(`cc-memwrap report: --attribute wants ${ATTRIBUTION_MODES.join(', ')}, got '${values.attribute}'\n`);
      return 2;
    }
    if (by === null) {
      io.err(`cc-memwrap report: --attribute needs --by function or --by file\n`);
      return 2;
    }
    mode = values.attribute as AttributionMode;
  }
  const file = positionals[0]!;
  const progress = progressLine(io, file);
  let summary;
  let attributed = null;
  let peak = null;
  let linked = null;
  let leaks = null;
  try {
    const model = await readTraceFile(file, { onProgress: progress.update });
    summary = summarize(model, { top });
    if (by !== null) attributed = attribution(model, { by, mode });
    if (values.peak) {
      const p = peaks(model);
      peak = { heap: limitSnapshot(p.heap, top), total: limitSnapshot(p.total, top) };
    }
    if (values.linked) {
      linked = linkedFrees(model);
      leaks = orphanedLeaks(model);
    }
  } catch (e) {
    progress.done();
    io.err(`cc-memwrap report: ${describeReadError(file, e)}\n`);
    return 2;
  }
  progress.done();
  for (const p of summary.problems.list) io.err(`cc-memwrap report: ${file}: ${p.severity}: ${p.message}\n`);
  if (values.json) {
    const extra =
      attributed === null
        ? {}
        : { attribution: { by: attributed.by, mode: attributed.mode, groups: attributed.rows.length, rows: attributed.rows.slice(0, top) } };
    const linkedExtra =
      linked === null || leaks === null
        ? {}
        : {
            linked: {
              frees: linked.length,
              orphanedBlocks: leaks.length,
              rows: linked.slice(0, Math.max(0, top)),
              orphanedLeaks: leaks.slice(0, Math.max(0, top)),
            },
          };
    io.out(JSON.stringify({ schema: SUMMARY_SCHEMA, file, ...summary, ...extra, ...(peak === null ? {} : { peak }), ...linkedExtra }, null, 2) + '\n');
  } else {
    io.out(
      renderReport(summary, file) +
        (attributed === null ? '' : renderAttribution(attributed, top)) +
        (peak === null ? '' : renderPeaks(peak, sourceReader())) +
        (linked === null ? '' : renderLinked(linked, top)),
    );
  }
  await io.flush();
  return 0;
}

/** Source lines for the --peak tables: reads each file once with node:fs; null (never a throw) when it cannot. */
function sourceReader(): (file: string, line: number) => string | null {
  const cache = new Map<string, string | null>();
  const read = (f: string): string | null => {
    let text = cache.get(f);
    if (text === undefined) {
      try {
        text = readFileSync(f, 'utf8');
      } catch {
        text = null;
      }
      cache.set(f, text);
    }
    return text;
  };
  return (file, line) => sourceLineText(read, file, line);
}
