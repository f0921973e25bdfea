#!/bin/sh
# run-smoke.sh — builds the runtime and the hand-written smoke programs with
# gcc and clang at -O0 and -O2, runs every mode, and compares exit status and
# stdout with the same program built without the runtime (-DMW_PLAIN).
#
#   runtime/test/run-smoke.sh [workdir]          all checks
#   runtime/test/run-smoke.sh [workdir] bench    timing only (bench.c)
#
# Environment:
#   CCS="gcc clang"   compilers to use
#   MW_CHECK_TRACE    optional command run as `$MW_CHECK_TRACE MODE TRACE…`
#                     for each run; it decodes the traces and checks what the
#                     comments in smoke.c promise (exit 0 = good).  Without
#                     it only the header (magic, complete flag) is checked.
set -u
here=$(cd "$(dirname "$0")" && pwd)
rt=$(cd "$here/.." && pwd)
work=${1:-${TMPDIR:-/tmp}/mw-smoke.$$}
what=${2:-all}
ccs=${CCS:-gcc clang}
mkdir -p "$work" || exit 1
cd "$work" || exit 1
fail=0
note() { printf '%s\n' "$*"; }
bad() { printf 'FAIL: %s\n' "$*"; fail=1; }

for cc in $ccs; do
  "$here/build-runtime.sh" "$cc" "$work/rt-$cc" || { bad "$cc: runtime does not build"; continue; }
  for opt in -O0 -O2; do
    for prog in smoke bench; do
      $cc $opt -g -I"$rt" "$here/$prog.c" "rt-$cc/memwrap.o" -pthread -o "$prog-$cc$opt" ||
        bad "$cc $opt: $prog does not build"
      $cc $opt -g -DMW_PLAIN -I"$rt" -I"$here" "$here/$prog.c" -pthread -o "$prog-plain-$cc$opt" ||
        bad "$cc $opt: plain $prog does not build"
    done
  done
done

# the magic, format 1.x (any minor version), little-endian, 4- or 8-byte pointers, and the flags byte (17): the
# complete bit (0) may be either; the not-interposed bit (1) must be clear, since these programs own their malloc
header() { od -An -tx1 -j0 -N18 "$1" | tr -d ' \n'; }

run_mode() { # cc opt mode expect_complete
  cc=$1 opt=$2 mode=$3 complete=$4
  dir="run-$cc$opt-$mode"
  rm -rf "$dir" && mkdir "$dir" && cd "$dir" || return
  "../smoke-plain-$cc$opt" "$mode" >plain.out 2>plain.err
  prc=$?
  rm -f ./*.mwtrace
  "../smoke-$cc$opt" "$mode" >inst.out 2>inst.err
  irc=$?
  cd .. || return
  [ "$prc" = "$irc" ] || bad "$cc $opt $mode: exit status $irc, plain $prc"
  cmp -s "$dir/plain.out" "$dir/inst.out" || bad "$cc $opt $mode: stdout differs from plain"
  [ -s "$dir/inst.err" ] && ! cmp -s "$dir/plain.err" "$dir/inst.err" && bad "$cc $opt $mode: stderr differs: $(head -c 200 "$dir/inst.err")"
  set -- "$dir"/*.mwtrace
  [ -f "$1" ] || { bad "$cc $opt $mode: no trace"; return; }
  for t in "$@"; do
    h=$(header "$t")
    case $h in 4d575452414345000100[0-9a-f][0-9a-f]00040302010[48]0[0189]) ;; *) bad "$cc $opt $mode: bad header $h in $t" ;; esac
  done
  main=$(ls -tr "$dir"/*.mwtrace | head -1)
  # bit 0: complete; bit 3 (raw segments, an encoder thread ran) may be set beside it
  flag=$(( $(od -An -tu1 -j17 -N1 "$main") & 1 ))
  [ "$flag" = "$complete" ] || bad "$cc $opt $mode: complete flag $flag, expected $complete"
  if [ -n "${MW_CHECK_TRACE:-}" ]; then
    $MW_CHECK_TRACE "$mode" "$dir"/*.mwtrace >"$dir/check.out" 2>&1 || bad "$cc $opt $mode: trace check: $(tail -3 "$dir/check.out")"
  fi
  note "ok   $cc $opt $mode (exit $irc, $# trace(s))"
}

if [ "$what" = all ]; then
  for cc in $ccs; do
    for opt in -O0 -O2; do
      for mode in list recurse threads longjmp fork exit signal; do run_mode "$cc" "$opt" "$mode" 1; done
      for mode in abort segv; do run_mode "$cc" "$opt" "$mode" 0; done
      # SIGKILL mid-run: the trace must still hold everything recorded
      dir="run-$cc$opt-kill" && rm -rf "$dir" && mkdir "$dir"
      (cd "$dir" && exec "../smoke-$cc$opt" spin >/dev/null 2>&1) &
      pid=$!
      sleep 0.5
      kill -9 "$pid"
      wait "$pid" 2>/dev/null
      t=$(ls "$dir"/*.mwtrace 2>/dev/null | head -1)
      if [ -z "$t" ]; then bad "$cc $opt kill: no trace"
      elif [ -n "${MW_CHECK_TRACE:-}" ]; then
        $MW_CHECK_TRACE spin "$t" >"$dir/check.out" 2>&1 || bad "$cc $opt kill: trace check: $(tail -3 "$dir/check.out")"
      fi
      note "ok   $cc $opt kill"
    done
    # two objects that each embed the weak runtime, linked by the plain compiler
    dir="run-$cc-weak" && rm -rf "$dir" && mkdir "$dir"
    for x in a b; do
      $cc -O2 -c -I"$rt" "$here/weak-$x.c" -o "$dir/$x.o" &&
        $cc -r -nostdlib "$dir/$x.o" "rt-$cc/memwrap-weak.o" -o "$dir/$x-embedded.o" || bad "$cc weak: build"
    done
    $cc "$dir/a-embedded.o" "$dir/b-embedded.o" -o "$dir/weak" || bad "$cc weak: link"
    $cc "$dir/a-embedded.o" "$dir/b-embedded.o" "rt-$cc/memwrap.o" -pthread -o "$dir/weak-strong" || bad "$cc weak+strong: link"
    for p in weak weak-strong; do
      rm -f "$dir"/*.mwtrace
      (cd "$dir" && "./$p" >/dev/null) || bad "$cc $p: exit status"
      n=$(ls "$dir"/*.mwtrace 2>/dev/null | wc -l)
      [ "$n" = 1 ] || bad "$cc $p: $n traces, expected 1"
      if [ -n "${MW_CHECK_TRACE:-}" ]; then
        $MW_CHECK_TRACE weak "$dir"/*.mwtrace >"$dir/check.out" 2>&1 || bad "$cc $p: trace check: $(tail -3 "$dir/check.out")"
      fi
      note "ok   $cc $p"
    done
    # an instrumented shared library with its own runtime copy, used by an
    # instrumented executable: one runtime, one trace, the library's statics
    "$here/build-runtime.sh" "$cc" "$work/rt-$cc-pic" -fPIC || bad "$cc: PIC runtime does not build"
    $cc -O2 -fPIC -shared -I"$rt" "$here/weak-b.c" "rt-$cc-pic/memwrap.o" -pthread -o "$dir/libweakb.so" || bad "$cc shared: build"
    $cc -O2 -I"$rt" "$here/weak-a.c" "rt-$cc/memwrap.o" -L"$dir" -lweakb -Wl,-rpath,"$work/$dir" -pthread -o "$dir/shared" || bad "$cc shared: link"
    rm -f "$dir"/*.mwtrace
    (cd "$dir" && ./shared >/dev/null) || bad "$cc shared: exit status"
    n=$(ls "$dir"/*.mwtrace 2>/dev/null | wc -l)
    [ "$n" = 1 ] || bad "$cc shared: $n traces, expected 1"
    if [ -n "${MW_CHECK_TRACE:-}" ]; then
      $MW_CHECK_TRACE shared "$dir"/*.mwtrace >"$dir/check.out" 2>&1 || bad "$cc shared: trace check: $(tail -3 "$dir/check.out")"
    fi
    note "ok   $cc shared"
  done
  if command -v valgrind >/dev/null 2>&1 && [ -n "${MW_CHECK_TRACE:-}" ]; then
    cc=$(echo "$ccs" | cut -d' ' -f1)
    for mode in list threads; do
      # -O0: at -O2 the compiler may delete a plain malloc/free pair
      d="run-$cc-O0-$mode"
      v=$(cd "$d" && valgrind --run-libc-freeres=no "../smoke-plain-$cc-O0" "$mode" 2>&1 >/dev/null | sed -n 's/.*total heap usage: //p')
      note "valgrind $mode (plain): $v"
      $MW_CHECK_TRACE "valgrind:$v" "$d"/*.mwtrace || bad "$mode: heap totals differ from valgrind ($v)"
    done
  fi
fi

if [ "$what" = bench ] || [ "$what" = all ]; then
  export MEMWRAP_TRACE="$work/bench.%p.mwtrace"
  for cc in $ccs; do
    for m in "calls 20000000" "malloc 3000000" "list 300000"; do
      for r in 1 2 3; do
        p=$("./bench-plain-$cc-O2" $m | sed 's/.* ops \([0-9.]*\) ns.*/\1/')
        i=$("./bench-$cc-O2" $m | sed 's/.* ops \([0-9.]*\) ns.*/\1/')
        note "bench $cc -O2 $m: plain $p ns/op, recorded $i ns/op"
        rm -f "$work"/bench.*.mwtrace
      done
    done
  done
fi

[ "$fail" = 0 ] && note "all passed ($work)" || note "some checks failed ($work)"
exit "$fail"
