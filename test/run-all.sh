#!/usr/bin/env bash
# Installs everything the tests need (system packages, npm packages) and runs
# every test. This is the README's test command and what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."

sudo_=""
[ "$(id -u)" = 0 ] || sudo_="sudo"
updated=""
install() {
  echo "test/run-all.sh: installing $*"
  [ -n "$updated" ] || { $sudo_ apt-get update -qq; updated=1; }
  DEBIAN_FRONTEND=noninteractive $sudo_ apt-get install -y -qq "$@" >/dev/null
}

need=()
for tool in gcc:gcc clang:clang valgrind:valgrind make:make cmake:cmake objcopy:binutils; do
  command -v "${tool%%:*}" >/dev/null 2>&1 || need+=("${tool##*:}")
done
# The ARM test cross-compiles a lesson for 32-bit ARM Linux and runs it under qemu-arm.
for tool in arm-linux-gnueabihf-gcc:gcc-arm-linux-gnueabihf qemu-arm:qemu-user; do
  command -v "${tool%%:*}" >/dev/null 2>&1 || need+=("${tool##*:}")
done
# The firmware tests build for a Cortex-M with both bare-metal C libraries and run it under qemu-system-arm.
for tool in arm-none-eabi-gcc:gcc-arm-none-eabi qemu-system-arm:qemu-system-arm; do
  command -v "${tool%%:*}" >/dev/null 2>&1 || need+=("${tool##*:}")
done
[ -e /usr/lib/picolibc/arm-none-eabi/picolibc.specs ] || need+=(picolibc-arm-none-eabi)
[ -e /usr/lib/arm-none-eabi/lib/nano.specs ] || need+=(libnewlib-arm-none-eabi)
# Differential fuzzing builds random programs from Csmith, with its headers.
command -v csmith >/dev/null 2>&1 || need+=(csmith)
[ -e /usr/include/csmith/csmith.h ] || need+=(libcsmith-dev)
# The MPI test builds a ring with `cc-memwrap mpicc` and runs it with `mpiexec -n 4` (MPICH).
command -v mpicc >/dev/null 2>&1 || need+=(mpich libmpich-dev)
# The viewer's browser tests drive the system Chromium (playwright-core downloads no browser).
[ -x /usr/bin/chromium ] || need+=(chromium)
[ ${#need[@]} -eq 0 ] || install "${need[@]}"

# 32-bit builds (-m32) need gcc's multilib support. Debian's gcc-multilib
# conflicts with the ARM cross compiler; all it adds to gcc-N-multilib is the
# link /usr/include/asm -> x86_64-linux-gnu/asm, so install gcc-N-multilib and
# make that link here. Without recommended packages: they bring gcc-multilib,
# and apt would then remove the ARM cross compiler installed above.
m32_ok() { printf '#include <errno.h>\nint main(void) { return EINVAL; }\n' | gcc -m32 -x c - -o /dev/null 2>/dev/null; }
if [ "$(uname -m)" = x86_64 ] && ! m32_ok; then
  install --no-install-recommends "gcc-$(gcc -dumpversion | cut -d. -f1)-multilib"
  [ -e /usr/include/asm ] || $sudo_ ln -s x86_64-linux-gnu/asm /usr/include/asm
fi

npm ci --no-audit --no-fund
npm run build
# CI=true: a missing golden (snapshot or fixture) fails instead of being written anew, so no run can regenerate
# what it is meant to check. The verbose reporter prints every test, and beside each skipped one the reason why
# this machine cannot run it.
CI=true npx vitest run --reporter=verbose
