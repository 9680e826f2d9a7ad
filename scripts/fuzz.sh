#!/usr/bin/env bash
# npm run fuzz -- [--runs N] [--seed S] [--open-defects] [vitest args]: the property tests of test/fuzz/ (R10) with
# more runs than `npm test` gives them. A failure prints fast-check's seed, path and counterexample; rerun with
# `--seed S` to replay it. --open-defects also generates the inputs of defects still open (test/fuzz/fuzz.ts).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$ROOT"

while [ $# -gt 0 ]; do
  case "$1" in
    --runs) export FUZZ_RUNS="$2"; shift 2 ;;
    --seed) export FUZZ_SEED="$2"; shift 2 ;;
    --open-defects) export FUZZ_OPEN_DEFECTS=1; shift ;;
    *) break ;;
  esac
done
ensure_node_deps
bash scripts/stack.sh up
export TEMPORAL_TEST_SERVER="${TEMPORAL_TEST_SERVER:-${APIPAY_CACHE:-$HOME/.cache/apipay}/bin/temporal-test-server}"
export NODE_ENV=test TEST_DATABASE_URL="${TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5433/apipay_test}"
npx tsx src/db/migrate.ts "$TEST_DATABASE_URL"
echo "[fuzz] runs ${FUZZ_RUNS:-default} per property, seed ${FUZZ_SEED:-8011}${FUZZ_OPEN_DEFECTS:+, open defects included}"
exec npx vitest run --project fuzz "$@"
