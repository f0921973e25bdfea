#!/usr/bin/env bash
# npm run test:real: installs what the real-world suite needs (apt-get source
# needs dpkg-dev; the projects' builds need make, cmake, perl and the
# unpackers; the reference counts need Valgrind), then runs it.
set -euo pipefail
cd "$(dirname "$0")/../.."

sudo_=""
[ "$(id -u)" = 0 ] || sudo_="sudo"
need=()
for tool in gcc:gcc make:make cmake:cmake valgrind:valgrind dpkg-source:dpkg-dev xz:xz-utils bzip2:bzip2 perl:perl cmp:diffutils; do
  command -v "${tool%%:*}" >/dev/null 2>&1 || need+=("${tool##*:}")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "test/real/run.sh: installing ${need[*]}"
  $sudo_ apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_ apt-get install -y -qq "${need[@]}" >/dev/null
fi

[ -d node_modules ] || npm ci --no-audit --no-fund
npx tsc -p tsconfig.json
npx vitest run --config vitest.real.config.ts "$@"
