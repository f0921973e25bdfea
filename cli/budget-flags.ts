// The report's budget flags: `--budget heap=8K,stack=2K` and one flag per kind (`--budget-heap 8KiB`), which add up
// to one set of budgets; a kind given twice, in either spelling, is an error.
import { BUDGET_KINDS, BudgetError, parseBudgets, parseSize, type BudgetKind, type Budgets } from '../analysis/budgets.js';

/** parseArgs options for `--budget-heap`, `--budget-stack`, `--budget-static`, `--budget-total`. */
export const BUDGET_KIND_OPTIONS = Object.fromEntries(BUDGET_KINDS.map((k) => [`budget-${k}`, { type: 'string' as const }])) as Record<
  `budget-${BudgetKind}`,
  { type: 'string' }
>;

/** The budgets the flags set, or null when none was given. Throws BudgetError naming the flag at fault. */
export function budgetsFromFlags(values: Record<string, unknown>): Budgets | null {
  const spec = values.budget as string | undefined;
  let budgets: Budgets | null = null;
  if (spec !== undefined) {
    try {
      budgets = parseBudgets(spec);
    } catch (e) {
      throw new BudgetError(`--budget: ${(e as Error).message}`);
    }
  }
  for (const kind of BUDGET_KINDS) {
    const size = values[`budget-${kind}`] as string | undefined;
    if (size === undefined) continue;
    budgets ??= {};
    if (budgets[kind] !== undefined) throw new BudgetError(`the ${kind} budget is given twice (--budget ${kind}=… and --budget-${kind})`);
    try {
      budgets[kind] = parseSize(size);
    } catch (e) {
      throw new BudgetError(`--budget-${kind}: ${(e as Error).message}`);
    }
  }
  return budgets;
}
