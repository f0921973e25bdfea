#!/bin/sh
# The long fuzz campaign, outside CI's time budget: MEMWRAP_FUZZ_MUTANTS damaged traces (default 3000) from seed
# MEMWRAP_FUZZ_SEED (default 1), through report, dump, export and report --html (one in ten); prints the table of
# test/fuzz/campaign.ts and fails on a silent difference inside a sealed chunk or an internal error.
# Usage: sh test/fuzz/run-campaign.sh   (or MEMWRAP_FUZZ_MUTANTS=20000 MEMWRAP_FUZZ_SEED=7 sh test/fuzz/run-campaign.sh)
set -e
cd "$(dirname "$0")/../.."
npm run build >/dev/null
MEMWRAP_FUZZ_MUTANTS="${MEMWRAP_FUZZ_MUTANTS:-3000}" MEMWRAP_FUZZ_SEED="${MEMWRAP_FUZZ_SEED:-1}" \
  exec npx vitest run test/fuzz/campaign.test.ts
