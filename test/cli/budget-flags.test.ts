// The report's budget flags: --budget KIND=SIZE,… and --budget-KIND SIZE add up; a kind given twice or a bad size is
// an error that names the flag.
import { describe, expect, it } from 'vitest';
import { budgetsFromFlags } from '../../cli/budget-flags.js';
import { BudgetError } from '../../analysis/budgets.js';

describe('budgetsFromFlags', () => {
  it('is null without any budget flag', () => {
    expect(budgetsFromFlags({ json: true })).toBeNull();
  });

  it('reads one flag per kind, with units, and adds them to --budget', () => {
    expect(budgetsFromFlags({ 'budget-heap': '8KiB' })).toEqual({ heap: 8192 });
    expect(budgetsFromFlags({ budget: 'stack=2K', 'budget-heap': '8K', 'budget-static': '512', 'budget-total': '1M' })).toEqual({
      stack: 2048,
      heap: 8192,
      static: 512,
      total: 1024 * 1024,
    });
  });

  it('refuses a kind given twice, naming both spellings', () => {
    expect(() => budgetsFromFlags({ budget: 'heap=1K', 'budget-heap': '2K' })).toThrow(
      new BudgetError('the heap budget is given twice (--budget heap=… and --budget-heap)'),
    );
  });

  it('names the flag whose size is bad', () => {
    expect(() => budgetsFromFlags({ 'budget-stack': '12Q' })).toThrow(/^--budget-stack: '12Q' is not a size/);
    expect(() => budgetsFromFlags({ budget: 'heap=' })).toThrow(/^--budget: '' is not a size/);
  });
});
