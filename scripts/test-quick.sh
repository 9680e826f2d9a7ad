#!/usr/bin/env bash
# npm run test:quick (P11): the edit loop — unit tests and the fastest tier of integration files (PostgreSQL, the
# Temporal dev and time-skipping servers, Kafka, workers: each part once) on the stack, started if it is not; no
# typecheck or lint (npm test does both). Under 90 s warm on the 2-core machine (docs/testing.md).
# Extra arguments go to vitest.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$ROOT"

QUICK=(
  test/unit/
  test/integration/smoke.test.ts
  test/integration/health.test.ts
  test/integration/kafka-consumer.test.ts
  test/integration/inbound-ingress.test.ts
  test/integration/outbound-workflow.test.ts
  test/integration/receiver-signals-workflow.test.ts
  test/integration/admin-outbound.test.ts
  test/integration/endpoint-test-event.test.ts
  test/integration/dispatcher-poison.test.ts
  test/integration/money-policy.test.ts
  test/integration/error-classification.test.ts
  test/integration/event-stream-source.test.ts
  test/integration/endpoint-secrets.test.ts
  test/integration/console-sessions.test.ts
)

ensure_node_deps
bash scripts/stack.sh up
export TEMPORAL_TEST_SERVER="${TEMPORAL_TEST_SERVER:-${APIPAY_CACHE:-$HOME/.cache/apipay}/bin/temporal-test-server}"
export NODE_ENV=test TEST_DATABASE_URL="${TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:${PGPORT:-5433}/apipay_test}"
export TEMPORAL_ADDRESS="${TEMPORAL_ADDRESS:-127.0.0.1:${TEMPORAL_PORT:-7233}}" KAFKA_BROKERS="${KAFKA_BROKERS:-127.0.0.1:${KAFKA_PORT:-9092}}"
npx tsx src/db/migrate.ts "$TEST_DATABASE_URL"
exec npx vitest run --project unit --project integration "${QUICK[@]}" "$@"
