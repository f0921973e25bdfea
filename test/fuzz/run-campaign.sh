#!/bin/sh
# The long fuzz campaign, outside CI's time budget: MEMWRAP_FUZZ_MUTANTS damaged traces (default 3000) from seed
# MEMWRAP_FUZZ_SEED (default 1), through report, dump, export and report --html (one in ten); prints the table of
# test/fuzz/campaign.ts and fails on a silent difference inside a sealed chunk or an internal error; then
# MEMWRAP_FUZZ_INDEX_MUTANTS damaged index files (default 300) through the viewer's host (test/host/index-damage.test.ts),
# each answer the undamaged one after the damage was said, and the count of where it was found.
# Usage: sh test/fuzz/run-campaign.sh   (or MEMWRAP_FUZZ_MUTANTS=20000 MEMWRAP_FUZZ_SEED=7 sh test/fuzz/run-campaign.sh)
set -e
cd "$(dirname "$0")/../.."
npm run build >/dev/null
MEMWRAP_FUZZ_MUTANTS="${MEMWRAP_FUZZ_MUTANTS:-3000}" MEMWRAP_FUZZ_SEED="${MEMWRAP_FUZZ_SEED:-1}" \
  npx vitest run test/fuzz/campaign.test.ts
MEMWRAP_FUZZ_INDEX_MUTANTS="${MEMWRAP_FUZZ_INDEX_MUTANTS:-300}" \
  exec npx vitest run test/host/index-damage.test.ts -t 'a damaged index is never used'
