#!/bin/sh
# race-check.sh [workdir] — the runtime under ThreadSanitizer: builds the runtime
# with -fsanitize=thread (build-runtime.sh, without the interposer, as for any
# sanitized program), builds test/race-stress.c through cc-memwrap with
# -fsanitize=thread and links the two, then runs it RUNS times (default 5)
# with the pre-fault thread and once without it, 8 threads x ROUNDS (default
# 200000) rounds and a fork each time.  Fails on any ThreadSanitizer report,
# a failed run, or a trace `cc-memwrap report` does not read.  Not part of
# the test suite (a run takes tens of seconds, and a race shows only in some
# runs).  Needs the compiled CLI (npm run build) and gcc's libtsan.
#
# The workers end parked ("park"): ThreadSanitizer ends a thread's own state
# in the last round of thread-specific-data destructors, before the
# runtime's, whose THREAD_END then crashes inside ThreadSanitizer.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=${1:-$(mktemp -d)}
runs=${RUNS:-5}
rounds=${ROUNDS:-200000}
mkdir -p "$work"
sh "$here/build-runtime.sh" gcc "$work/rt" -fsanitize=thread -DMW_INTERPOSE=0 -fno-omit-frame-pointer
"$root/bin/cc-memwrap" --mw-strict gcc -fsanitize=thread -O1 -g -pthread -Wall -Wextra -Werror \
  -c "$here/race-stress.c" -o "$work/race-stress.o"
gcc -fsanitize=thread -pthread "$work/race-stress.o" "$work/rt/memwrap.o" -o "$work/race-stress"
fail=0
i=0
while [ "$i" -le "$runs" ]; do
  # run 0 without the pre-fault thread, the others with it
  pf=1; [ "$i" -eq 0 ] && pf=0
  dir="$work/run-$i"
  rm -rf "$dir"; mkdir -p "$dir"
  status=0
  MEMWRAP_PREFAULT=$pf MEMWRAP_TRACE="$dir/%p.mwtrace" TSAN_OPTIONS="halt_on_error=0 exitcode=66" \
    "$work/race-stress" "$rounds" park > "$dir/out" 2> "$dir/err" || status=$?
  reports=$(grep -c 'WARNING: ThreadSanitizer' "$dir/err" || true)
  traces=0
  for t in "$dir"/*.mwtrace; do
    [ -e "$t" ] || continue
    traces=$((traces + 1))
    node "$root/dist/bin/main.js" report "$t" > "$t.report" 2>&1 || { echo "run $i: cc-memwrap report $t failed"; fail=1; }
  done
  echo "run $i (MEMWRAP_PREFAULT=$pf): exit $status, $reports ThreadSanitizer reports, $traces traces"
  if [ "$status" -ne 0 ] || [ "$reports" -ne 0 ] || [ "$traces" -ne 2 ]; then
    fail=1
    echo "  see $dir/err"
  fi
  i=$((i + 1))
done
[ "$fail" -eq 0 ] && echo "no races reported" || echo "race check failed"
exit "$fail"
