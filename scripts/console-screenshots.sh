#!/usr/bin/env bash
# npm run console:screenshots: runs the browser tests (test/browser) with CONSOLE_SCREENSHOTS set, which saves each
# console and portal page they visit as docs/img/console-*.png (C3; docs/console.md shows them). Needs the stack
# (PostgreSQL, Temporal) of scripts/stack.sh and chromium.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$ROOT"
ensure_chromium
export NODE_ENV=test TEST_DATABASE_URL="${TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:${PGPORT:-5433}/apipay_test}"
export TEMPORAL_TEST_SERVER="${TEMPORAL_TEST_SERVER:-${APIPAY_CACHE:-$HOME/.cache/apipay}/bin/temporal-test-server}"
npx tsx src/db/migrate.ts "$TEST_DATABASE_URL"
CONSOLE_SCREENSHOTS="$ROOT/docs/img" npx vitest run --project browser
ls -1 docs/img/console-*.png
