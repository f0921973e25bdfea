#!/usr/bin/env bash
# The main job on a bundled sample: build samples/linked-list.c through
# cc-memwrap, run it (it writes a trace), show what the trace says, write the
# self-contained HTML report, and open the timeline where there is a display
# and someone at the terminal (never in CI or a pipe: the demo ends by itself).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -f dist/bin/main.js ] || [ ! -f dist/gui/report/index.html ] || [ ! -f dist/instrumenter/tree-sitter-c.wasm ] || [ ! -d node_modules/web-tree-sitter ]; then
  echo "== installing (npm ci: TypeScript, tree-sitter's C grammar; npm run build: dist/)"
  npm ci --no-audit --no-fund
  npm run build
fi

out=.cache/demo
rm -rf "$out" && mkdir -p "$out"
echo "== cc-memwrap gcc -g samples/linked-list.c -o $out/linked-list"
bin/cc-memwrap gcc -g samples/linked-list.c -o "$out/linked-list"
echo "== running it: the program prints as always and writes its trace"
MEMWRAP_TRACE="$out/linked-list.%p.mwtrace" "$out/linked-list"
trace=$(ls "$out"/linked-list.*.mwtrace)
html="$out/linked-list.html"
echo "== cc-memwrap report $trace --linked --leaks --html $html"
bin/cc-memwrap report "$trace" --linked --leaks --html "$html"

# The viewer needs a screen and a person to close it: a display (X or
# Wayland), a terminal on both ends, and not CI.
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] && [ -t 0 ] && [ -t 1 ] && [ -z "${CI:-}" ]; then
  echo "== cc-memwrap view $trace (close the window, or Ctrl-C, to end)"
  bin/cc-memwrap view "$trace"
else
  echo "== no display here (or not a terminal, or CI), so no window: the timeline is in"
  echo "   $(pwd)/$html"
  echo "   one file: open it in any browser (no server, no network); click a bar to see its source line"
fi
