#!/usr/bin/env bash
# npm test: installs what is missing (node modules, chromium), starts the real stack, type-checks, lints, runs unit,
# integration and browser tests.
# Extra arguments go to vitest (e.g. `npm test -- test/unit`).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$ROOT"

ensure_node_deps
ensure_python_verifiers || echo "[test] continuing without the PyPI standardwebhooks verifier (see above)" >&2
ensure_chromium || echo "[test] continuing without chromium: test/browser will fail (see above)" >&2
ensure_helm || echo "[test] continuing without helm: test/unit/helm-chart.test.ts will fail (see above)" >&2
export HELM_BIN
bash scripts/stack.sh up
# Tests bring their own secrets and profile; they only need to know where the time-skipping server is.
export TEMPORAL_TEST_SERVER="${TEMPORAL_TEST_SERVER:-${APIPAY_CACHE:-$HOME/.cache/apipay}/bin/temporal-test-server}"
# The stack's ports (PGPORT, TEMPORAL_PORT, KAFKA_PORT) are the tests' defaults, so a second stack works alike.
export NODE_ENV=test TEST_DATABASE_URL="${TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:${PGPORT:-5433}/apipay_test}"
export TEMPORAL_ADDRESS="${TEMPORAL_ADDRESS:-127.0.0.1:${TEMPORAL_PORT:-7233}}" KAFKA_BROKERS="${KAFKA_BROKERS:-127.0.0.1:${KAFKA_PORT:-9092}}"
# A25: the stack's Keycloak (skipped by the tests that need it when APIPAY_IDP=0).
[ "${APIPAY_IDP:-1}" = 0 ] || export APIPAY_IDP_ISSUER="${APIPAY_IDP_ISSUER:-http://127.0.0.1:${KEYCLOAK_PORT:-8180}/realms/apipay}"
# I15: the stack's stripe-mock, when it runs (test/integration/stripe-provider.test.ts is skipped, saying why, without it).
if [ -z "${STRIPE_MOCK_URL:-}" ] && curl -fsS -m 5 -u sk_test_ci: "http://127.0.0.1:${STRIPE_MOCK_PORT:-12111}/v1/payment_intents/pi_ci" >/dev/null 2>&1; then
  export STRIPE_MOCK_URL="http://127.0.0.1:${STRIPE_MOCK_PORT:-12111}"
fi
[ -n "${STRIPE_MOCK_URL:-}" ] || echo "[test] stripe-mock does not answer: the Stripe provider tests are skipped (scripts/stack.sh up stripe-mock)" >&2
# A31: under APIPAY_TEMPORAL=server the public frontend asks for IdP tokens; the suite exercises the application through
# the internal frontend (the system caller, scripts/stack/temporal-server.sh) and test/integration/temporal-authz.test.ts
# exercises the public one.
if [ "${APIPAY_TEMPORAL:-dev}" = server ] && [ "${APIPAY_IDP:-1}" != 0 ]; then
  export APIPAY_TEMPORAL_AUTHZ_ADDRESS="127.0.0.1:${TEMPORAL_PORT:-7233}"
  export APIPAY_TEMPORAL_UI_URL="http://127.0.0.1:${TEMPORAL_UI_PORT:-8233}" # test/browser/temporal-server-idp.test.ts
  export TEMPORAL_ADDRESS="127.0.0.1:${TEMPORAL_SYSTEM_PORT:-$((${TEMPORAL_PORT:-7233} - 1000))}"
fi
# M11: the stack's RabbitMQ for the broker destination tests (they skip without RABBITMQ_URL, i.e. when it is not installed).
if [ "${APIPAY_RABBITMQ:-1}" != 0 ] && [ -x /usr/lib/rabbitmq/bin/rabbitmq-server ]; then
  export RABBITMQ_URL="${RABBITMQ_URL:-amqp://${RABBITMQ_APP_USER:-apipay-merchant}:${RABBITMQ_APP_PASSWORD:-local-broker-pw-7c41d2}@127.0.0.1:${RABBITMQ_PORT:-5672}}"
fi
npx tsx src/db/migrate.ts "$TEST_DATABASE_URL"
# R22 (issue 34): the whole suite ends with the reduced cluster drill (vitest project `cluster`, alone, after the
# rest): its own cluster on ports offset by 500, two history hosts and two Kafka brokers, one kill of each, every soak
# invariant. APIPAY_CLUSTER_DRILL=0 leaves it out; a run of chosen files (`npm test -- FILE`) leaves it out too.
if [ $# -eq 0 ] && [ "${APIPAY_CLUSTER_DRILL:-1}" != 0 ]; then export APIPAY_CLUSTER_DRILL=1; else export APIPAY_CLUSTER_DRILL=0; fi
# P11: the type check and the lint use one core each: they run side by side; their output follows when both ended.
echo "[test] typecheck and lint (eslint, prettier --check; the import rules are test/unit/architecture.test.ts)"
checks="$(mktemp -d)"
npx tsc --noEmit >"$checks/typecheck" 2>&1 &
typecheck=$!
npm run --silent lint >"$checks/lint" 2>&1 &
lint=$!
failed=0
for check in typecheck lint; do
  if wait "${!check}"; then status=passed; else status=FAILED failed=1; fi
  echo "[test] $check $status"
  cat "$checks/$check"
done
rm -rf "$checks"
[ "$failed" = 0 ] || exit 1
# A31/R22: the Go tests of ApiPay's Temporal server (claim mapper, authorizer, identity stamp, command line), which the
# server mode and the cluster drill run; skipped, saying so, on a machine without Go.
if command -v go >/dev/null 2>&1; then
  echo "[test] go test (scripts/go/temporal-server)"
  (cd scripts/go/temporal-server && GOFLAGS=-mod=readonly go test ./...)
else
  echo "[test] go is not installed: the Go tests of scripts/go/temporal-server are skipped" >&2
fi
echo "[test] vitest (unit + integration against PostgreSQL ${TEST_DATABASE_URL##*@}, Temporal $TEMPORAL_ADDRESS (${APIPAY_TEMPORAL:-dev}), Kafka $KAFKA_BROKERS)"
exec npx vitest run "$@"
