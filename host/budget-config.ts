// The budgets of a traced program: a memwrap.json beside it, and for a firmware its linker script's.
// `cc-memwrap report` and the viewer's hosts both read budgets from it (through host/trace-file.ts, once per trace).
import path from 'node:path';
import { BudgetError, parseBudgetConfig, type BudgetKind, type Budgets } from '../analysis/budgets.js';
import { linkerBudgets, type FirmwareImage } from '../analysis/firmware-image.js';
import { describeFileProblem, readRegularFile } from '../instrumenter/regular-file.js';

/** A memwrap.json is a few lines of budgets: anything larger is not one (and is not read whole). */
export const MAX_BUDGET_CONFIG_BYTES = 1 << 20;

export interface BudgetConfig {
  /** null: no memwrap.json (or no program to look beside), or a problem. */
  budgets: Budgets | null;
  /** The file the budgets came from. */
  source: string | null;
  /** Why the file could not be used, in words naming it. */
  problem: string | null;
}

/**
 * The budgets of the memwrap.json in the directory of `program` (absolute, from tracedProgram(); null: none named). A
 * firmware's linker script (`firmware`, its image) sets the heap and stack budgets by itself; a memwrap.json may only
 * narrow them (the smaller of the two counts) and add the others.
 */
export function loadBudgetConfig(program: string | null, firmware: FirmwareImage | null = null): BudgetConfig {
  const fromScript: Budgets = firmware === null ? {} : linkerBudgets(firmware);
  const script = Object.keys(fromScript).length === 0 || program === null ? null : `the linker script of ${path.basename(program)}`;
  const none: BudgetConfig = { budgets: script === null ? null : fromScript, source: script, problem: null };
  if (program === null) return none;
  const config = path.join(path.dirname(program), 'memwrap.json');
  let text: string;
  try {
    // Only a regular file of a sane size: the trace names the program, so a FIFO or a device could stand there.
    text = readRegularFile(config, MAX_BUDGET_CONFIG_BYTES).toString('utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT' || (e as NodeJS.ErrnoException).code === 'ENOTDIR') return none;
    return { budgets: null, source: null, problem: `${config}: ${describeFileProblem(e)}, not read` };
  }
  try {
    const fromFile = parseBudgetConfig(text, config);
    if (script === null) return { budgets: fromFile, source: config, problem: null };
    const budgets: Budgets = { ...fromScript };
    for (const [kind, bytes] of Object.entries(fromFile) as [BudgetKind, number][]) budgets[kind] = Math.min(bytes, budgets[kind] ?? Infinity);
    return { budgets, source: `${script}, narrowed by ${config}`, problem: null };
  } catch (e) {
    return { budgets: null, source: null, problem: e instanceof BudgetError ? e.message : `${config}: ${(e as Error).message}` };
  }
}
