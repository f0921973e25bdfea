// The report result as `cc-memwrap report --json` prints it: the summary's members at the top level, then one member
// per section asked for, each list cut to --top with its full count beside it (schema in analysis/README.md).
import type { ReportResult } from './report.js';
import { SUMMARY_SCHEMA } from './summary.js';
import { LEAK_CAUSES_SCHEMA } from './leak-causes.js';
import type { IntervalSeries, IntervalSpec } from './timeline.js';
import type { LeaksAtExit } from './leaks.js';

export function reportJson(r: ReportResult): object {
  const top = Math.max(0, r.top);
  const { attribution: a, linked, budgets, temporaries: temps, calls } = r;
  return {
    schema: SUMMARY_SCHEMA,
    file: r.file,
    ...r.summary,
    ...(a === null ? {} : { attribution: { by: a.by, mode: a.mode, groups: a.rows.length, rows: a.rows.slice(0, r.top) } }),
    ...(r.peak === null ? {} : { peak: r.peak }),
    ...(linked === null
      ? {}
      : {
          linked: {
            frees: linked.count,
            orphanedBlocks: linked.orphanedBlocks,
            rows: linked.frees.slice(0, top),
            orphanedLeaks: linked.orphanedLeaks.slice(0, top),
          },
        }),
    ...(budgets === null
      ? {}
      : {
          budgets: {
            source: budgets.source,
            exceeded: budgets.exceeded,
            checks: budgets.checks.map((c) => ({ ...c, ranges: c.ranges.slice(0, top) })),
          },
        }),
    ...(temps === null ? {} : { temporaries: { ...temps, siteCount: temps.sites.length, sites: temps.sites.slice(0, top) } }),
    ...(calls === null ? {} : { calls: { ...calls, invocations: calls.invocations.slice(0, top) } }),
    ...(r.intervals === null ? {} : { intervals: intervalsJson(r.intervals) }),
    ...(r.stack === null ? {} : { stack: r.stack }),
    ...(r.leaks === null ? {} : { leaks: leaksJson(r.leaks, top) }),
    ...(r.leakCauses === null ? {} : { leakCauses: { schema: LEAK_CAUSES_SCHEMA, ...r.leakCauses } }),
    ...(r.failOn === null ? {} : { failOn: r.failOn }),
    ...(r.ramMap === undefined ? {} : { ramMap: r.ramMap }),
  };
}

/** The interval table as JSON rows. */
function intervalsJson(s: IntervalSeries): { spec: IntervalSpec; count: number; rows: object[] } {
  const rows: object[] = [];
  for (let k = 0; k < s.count; k++) {
    rows.push({
      startEvent: s.startEvent[k]!,
      endEvent: s.endEvent[k]!,
      startTimeNs: s.startTime[k]!,
      endTimeNs: s.endTime[k]!,
      heapRequested: s.heapRequested[k]!,
      heapUsable: s.heapUsable[k]!,
      stack: s.stack[k]!,
      static: s.static[k]!,
      maxHeapRequested: s.maxHeapRequested[k]!,
      maxHeapUsable: s.maxHeapUsable[k]!,
      maxStack: s.maxStack[k]!,
    });
  }
  return { spec: s.spec, count: s.count, rows };
}

/** Every leak class with its first `top` sites. */
function leaksJson(leaks: LeaksAtExit, top: number): unknown {
  return {
    ...leaks,
    classes: leaks.classes.map((c) => ({ ...c, siteCount: c.sites.length, sites: c.sites.slice(0, top) })),
  };
}
