/* leaf-calls-other.c — the other unit of leaf-calls.c: a function that
 * unit's calls_out calls, which it cannot see into. */
int other_unit(int v);

int other_unit(int v) { return v / 2; }
