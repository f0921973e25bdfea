// The memwrap.json beside a traced program: where it is and what it says.
// `cc-memwrap report` and the viewer's host both read budgets from it.
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

/** The memwrap.json in the directory of the traced program (as it was run from `cwd`). */
function budgetConfigBeside(program: string | null, cwd: string | null): string | null {
  if (program === null || program === '') return null;
  return path.join(path.dirname(path.resolve(cwd || '/', program)), 'memwrap.json');
}

export function loadBudgetConfig(program: string | null, cwd: string | null): BudgetConfig {
  const config = budgetConfigBeside(program, cwd);
  if (config === null || !existsSync(config)) return { budgets: null, source: null, problem: null };
  try {
    return { budgets: parseBudgetConfig(readFileSync(config, 'utf8'), config), source: config, problem: null };
  } catch (e) {
    return { budgets: null, source: null, problem: e instanceof BudgetError ? e.message : `${config}: ${(e as Error).message}` };
  }
}
