#!/bin/sh
# build-runtime.sh CC OUTDIR [abi flags…] — builds memwrap.o and memwrap-weak.o
# exactly as instrumenter/runtime-build.ts does (each runtime/core/*.c and runtime/*.c with -O2 -g,
# combined with -r, then a weakened copy), with -Wall -Wextra -Werror added.
set -eu
cc=$1; out=$2; shift 2
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
objs=
for src in "$here"/core/*.c "$here"/*.c; do
  obj="$out/$(basename "$src" .c).o"
  $cc "$@" -O2 -g -Wall -Wextra -Werror -c "-I$here" "$src" -o "$obj"
  objs="$objs $obj"
done
# shellcheck disable=SC2086
$cc "$@" -r -nostdlib $objs -o "$out/memwrap.o"
objcopy=$($cc -print-prog-name=objcopy 2>/dev/null || echo objcopy)
case $objcopy in */*|objcopy) ;; *) objcopy=objcopy ;; esac
$objcopy --weaken "$out/memwrap.o" "$out/memwrap-weak.o"
