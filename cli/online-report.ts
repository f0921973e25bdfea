// `cc-memwrap report FILE` when FILE is an online-mode file (MEMWRAP_MODE=online): its heap totals and --by function,
// library and thread tables; the options that need events are refused with the reason.
import { closeSync, readSync } from 'node:fs';
import { openRegularFile, readRegularFile } from '../instrumenter/regular-file.js';
import { ONLINE_BY, ONLINE_MAGIC, OnlineRefusedError, isOnlineFile, readOnline, type OnlineBy } from '../analysis/online.js';
import { onlineJson, onlineReport, onlineText } from '../analysis/online-text.js';
import { describeReadError } from '../host/read-errors.js';
import type { CliIo } from './io.js';
import type { ReportArgs } from './report-args.js';

/** Online tables grow with sites, functions, libraries and threads, never with events: larger is not one. */
const MAX_ONLINE_BYTES = 1 << 30;

/** Whether `file` starts as an online-mode file; false when it cannot be read (the trace reader then says why). */
export function isOnlineTablesFile(file: string): boolean {
  let fd: number;
  try {
    // Not a FIFO or a device: the trace reader says what they are.
    ({ fd } = openRegularFile(file, Number.MAX_SAFE_INTEGER));
  } catch {
    return false;
  }
  try {
    const head = new Uint8Array(ONLINE_MAGIC.length);
    return readSync(fd, head, 0, head.length, 0) === head.length && isOnlineFile(head);
  } catch {
    return false;
  } finally {
    closeSync(fd);
  }
}

/** Why this request cannot be answered from online tables, or null. */
function refusal(a: ReportArgs): string | null {
  const why = 'it holds heap tables and totals, not events (record a trace, without MEMWRAP_MODE=online, for that)';
  if (a.compare !== null) return `--compare: ${why}`;
  if (a.singleOnly !== null) return `--${a.singleOnly}: ${why}`;
  const by = a.request.by;
  if (by !== null && !(ONLINE_BY as readonly string[]).includes(by.by)) {
    return `--by ${by.by}: online mode keeps the function, library and thread tables only; ${why}`;
  }
  if (by !== null && by.mode !== 'innermost') return `--attribute ${by.mode}: online mode charges the innermost function only; ${why}`;
  return null;
}

export async function runOnlineReport(a: ReportArgs, io: CliIo): Promise<number> {
  const name = `${a.file}: an online-mode file (MEMWRAP_MODE=online)`;
  const refused = refusal(a);
  if (refused !== null) {
    io.err(`cc-memwrap report: ${name}: ${refused}\n`);
    return 2;
  }
  let bytes: Uint8Array;
  try {
    bytes = readRegularFile(a.file, MAX_ONLINE_BYTES);
  } catch (e) {
    io.err(`cc-memwrap report: ${describeReadError(a.file, e)}\n`);
    return 2;
  }
  let report;
  try {
    report = onlineReport(a.file, readOnline(bytes), (a.request.by?.by ?? null) as OnlineBy | null, a.request.top);
  } catch (e) {
    if (!(e instanceof OnlineRefusedError)) throw e;
    io.err(`cc-memwrap report: ${a.file}: ${e.message}\n`);
    return 2;
  }
  for (const p of report.tables.problems) io.err(`cc-memwrap report: ${a.file}: warning: ${p}\n`);
  io.out(a.json ? JSON.stringify(onlineJson(report), null, 2) + '\n' : onlineText(report));
  await io.flush();
  return 0;
}
