// The memwrap.json beside a traced program: where it is and what it says.
// `cc-memwrap report` and the viewer's hosts both read budgets from it (through host/trace-file.ts, once per trace).
import path from 'node:path';
import { BudgetError, parseBudgetConfig, type Budgets } from '../analysis/budgets.js';
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

/** The budgets of the memwrap.json in the directory of `program` (absolute, from tracedProgram(); null: none named). */
export function loadBudgetConfig(program: string | null): BudgetConfig {
  if (program === null) return { budgets: null, source: null, problem: null };
  const config = path.join(path.dirname(program), 'memwrap.json');
  let text: string;
  try {
    // Only a regular file of a sane size: the trace names the program, so a FIFO or a device could stand there.
    text = readRegularFile(config, MAX_BUDGET_CONFIG_BYTES).toString('utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT' || (e as NodeJS.ErrnoException).code === 'ENOTDIR') return { budgets: null, source: null, problem: null };
    return { budgets: null, source: null, problem: `${config}: ${describeFileProblem(e)}, not read` };
  }
  try {
    return { budgets: parseBudgetConfig(text, config), source: config, problem: null };
  } catch (e) {
    return { budgets: null, source: null, problem: e instanceof BudgetError ? e.message : `${config}: ${(e as Error).message}` };
  }
}
