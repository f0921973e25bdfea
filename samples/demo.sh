#!/usr/bin/env bash
# The main job on a bundled sample: build samples/linked-list.c through
# cc-memwrap, run it (it writes a trace), and show what the trace says.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -f dist/bin/main.js ] || [ ! -d node_modules/tree-sitter-c ]; then
  echo "== installing (npm ci: tree-sitter, TypeScript; builds dist/)"
  npm ci --no-audit --no-fund
fi

out=.cache/demo
rm -rf "$out" && mkdir -p "$out"
echo "== cc-memwrap gcc -g samples/linked-list.c -o $out/linked-list"
bin/cc-memwrap gcc -g samples/linked-list.c -o "$out/linked-list"
echo "== running it: the program prints as always and writes its trace"
MEMWRAP_TRACE="$out/linked-list.%p.mwtrace" "$out/linked-list"
trace=$(ls "$out"/linked-list.*.mwtrace)
echo "== cc-memwrap report $trace --linked --leaks"
bin/cc-memwrap report "$trace" --linked --leaks
