// The viewer's words for its counts and its stack figure, one place: every panel, the chart, the legend and the exports use these, so the same number always stands under the same word.
import { COUNT_WORDS } from '../../../analysis/units.js';


/** The stack figure the chart draws and a stack budget checks: a thread's stack bytes from its stack base. */
export const STACK_MEASURE = 'from the stack base';

/** Column and row names of the counts (blocks, not calls; calls are named after their function): the report's too. */
export { COUNT_WORDS };

/** What the counts and the stack figure mean, said once in the legend (and in the exports' legend). */
export const VOCABULARY_NOTES: readonly string[] = [
  `Counts: ${COUNT_WORDS.allocations} = blocks made (malloc, calloc, strdup, realloc…), ${COUNT_WORDS.frees} = blocks ended (free, realloc); a realloc that gets a block ends it and makes a new one, so it counts in both; ${COUNT_WORDS.reallocs} counts the calls.`,
  `Stack = bytes ${STACK_MEASURE} (the start-up code above main included): what a stack budget checks.`,
];
