// The memwrap.json beside a traced program: where it is and what it says.
// `cc-memwrap report` and the viewer's hosts both read budgets from it (through host/trace-file.ts, once per trace).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { BudgetError, parseBudgetConfig, type Budgets } from '../analysis/budgets.js';

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
  if (!existsSync(config)) return { budgets: null, source: null, problem: null };
  try {
    return { budgets: parseBudgetConfig(readFileSync(config, 'utf8'), config), source: config, problem: null };
  } catch (e) {
    return { budgets: null, source: null, problem: e instanceof BudgetError ? e.message : `${config}: ${(e as Error).message}` };
  }
}
