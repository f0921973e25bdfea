#!/usr/bin/env bash
# Installs everything the tests need (system packages, npm packages) and runs
# every test. This is the README's test command and what CI runs.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
for tool in gcc:gcc clang:clang valgrind:valgrind make:make cmake:cmake objcopy:binutils; do
  command -v "${tool%%:*}" >/dev/null 2>&1 || need+=("${tool##*:}")
done
# 32-bit builds (-m32) need gcc's multilib support.
echo 'int main(void) { return 0; }' | gcc -m32 -x c - -o /dev/null 2>/dev/null || need+=(gcc-multilib)
# The viewer's browser tests drive the system Chromium (playwright-core downloads no browser).
[ -x /usr/bin/chromium ] || need+=(chromium)
if [ ${#need[@]} -gt 0 ]; then
  echo "test/run-all.sh: installing ${need[*]}"
  sudo_=""
  [ "$(id -u)" = 0 ] || sudo_="sudo"
  $sudo_ apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_ apt-get install -y -qq "${need[@]}" >/dev/null
fi

npm ci --no-audit --no-fund
npx vitest run
