#!/usr/bin/env bash
# npm start: installs what is missing, starts the stack, migrates, runs the API, worker and dispatcher with the
# demo (provider sandbox, merchant receiver, sample traffic), prints the URLs and follows the logs.
# Ctrl-C stops the processes it started (and the log follower) and leaves none behind; `npm run stop` also stops
# the stack. Ports and the data directory come from the environment (API_PORT, WORKER_METRICS_PORT,
# DISPATCHER_METRICS_PORT, DEMO_RECEIVER_PORT, SANDBOX_PORT, APIPAY_DATA and the stack's PGPORT, TEMPORAL_PORT, …),
# so a second copy can run beside the first.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$ROOT"

[ "${APIPAY_SKIP_DEPS:-}" = 1 ] || ensure_node_deps   # set by a copy that shares node_modules
# R18: Jaeger with the stack (APIPAY_JAEGER=0 to go without); the processes export their spans to it.
export APIPAY_JAEGER="${APIPAY_JAEGER:-1}"
bash scripts/stack.sh up
load_dev_env
# C11: human log lines from every process it runs (JSON stays the default elsewhere, and production refuses pretty).
export LOG_FORMAT="${LOG_FORMAT:-pretty}"
if [ "$APIPAY_JAEGER" = 1 ]; then
  export OTEL_EXPORTER_OTLP_ENDPOINT="${OTEL_EXPORTER_OTLP_ENDPOINT:-http://127.0.0.1:${JAEGER_OTLP_HTTP_PORT:-4318}}"
  # Jaeger built from source (ensure_jaeger) serves a placeholder page instead of its UI (the UI's assets are a
  # separate npm build), so the console links to the query API's JSON of the trace; a Jaeger with its UI: …/trace.
  export APIPAY_TRACE_URL="${APIPAY_TRACE_URL:-http://127.0.0.1:${JAEGER_UI_PORT:-16686}/api/traces}"
fi
export APIPAY_PROFILE="${APIPAY_PROFILE:-config/demo.yaml}"
# A6: migrations (and the grants to the application role) as the owner; the processes as apipay_app.
export MIGRATION_DATABASE_URL="${MIGRATION_DATABASE_URL:-postgres://postgres@127.0.0.1:${PGPORT:-5433}/apipay}"
export DATABASE_URL="${DATABASE_URL:-postgres://apipay_app@127.0.0.1:${PGPORT:-5433}/apipay}"
export TEMPORAL_ADDRESS="${TEMPORAL_ADDRESS:-127.0.0.1:${TEMPORAL_PORT:-7233}}"
export TEMPORAL_UI_URL="${TEMPORAL_UI_URL:-http://127.0.0.1:${TEMPORAL_UI_PORT:-8233}}"
# A31: ApiPay's Temporal server (APIPAY_TEMPORAL=server) asks for IdP tokens: the processes sign in as the service
# client of the demo realm (its secret is public by design; production takes it from the secret store).
if [ "${APIPAY_TEMPORAL:-dev}" = server ] && [ "${APIPAY_IDP:-1}" != 0 ]; then
  export TEMPORAL_OIDC_TOKEN_URL="${TEMPORAL_OIDC_TOKEN_URL:-http://127.0.0.1:${KEYCLOAK_PORT:-8180}/realms/apipay/protocol/openid-connect/token}"
  export TEMPORAL_OIDC_CLIENT_ID="${TEMPORAL_OIDC_CLIENT_ID:-apipay-temporal-service}"
  export TEMPORAL_OIDC_CLIENT_SECRET="${TEMPORAL_OIDC_CLIENT_SECRET:-apipay-temporal-service-demo-secret}"
fi
export KAFKA_BROKERS="${KAFKA_BROKERS:-127.0.0.1:${KAFKA_PORT:-9092}}"
npx tsx src/db/migrate.ts "$MIGRATION_DATABASE_URL"

bash scripts/stop-app.sh >/dev/null 2>&1 || true
started=()
launch() { # launch NAME FILE: runs a TypeScript entry point in the background, logs to .data/logs/NAME.log
  local name="$1" file="$2"
  [ -f "$file" ] || return 0
  # One node process per entry point, in its own process group so stop-app.sh can signal all of it.
  setsid node --import tsx "$file" >"$DATA/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$DATA/pids/app-$name.pid"
  started+=("$name")
}
follower=""
stop_started() {
  trap - INT TERM EXIT
  set +e # stop everything even when one step fails
  # A background job of a non-interactive shell ignores SIGINT, so the log follower is stopped by its pid.
  if [ -n "$follower" ]; then kill "$follower" 2>/dev/null; wait "$follower" 2>/dev/null; fi
  bash scripts/stop-app.sh
  exit "${1:-0}"
}
trap 'stop_started 0' INT TERM
trap 'stop_started $?' EXIT

# A18: the API's /metrics are on a private listener (loopback), not on the public API_PORT.
export API_METRICS_PORT="${API_METRICS_PORT:-9463}"
launch api src/workers/api.ts
launch worker src/workers/worker.ts
launch dispatcher src/workers/dispatcher.ts

API="http://${API_HOST:-127.0.0.1}:${API_PORT:-3000}"
WORKER_METRICS="http://127.0.0.1:${WORKER_METRICS_PORT:-9464}"
DISPATCHER_METRICS="http://127.0.0.1:${DISPATCHER_METRICS_PORT:-9465}"
API_METRICS="http://${API_METRICS_HOST:-127.0.0.1}:${API_METRICS_PORT}"
wait_ready() { # wait_ready NAME URL: until URL/readyz answers 200, or the process died, or 60 s passed
  local name="$1" url="$2"
  for _ in $(seq 1 120); do
    curl -fsS "$url/readyz" >/dev/null 2>&1 && return 0
    kill -0 "$(cat "$DATA/pids/app-$name.pid")" 2>/dev/null || { tail -n 20 "$DATA/logs/$name.log"; echo "[start] FAILED $name exited; log: $DATA/logs/$name.log" >&2; exit 1; }
    sleep 0.5
  done
  echo "[start] FAILED $name not ready: $(curl -s "$url/readyz"); log: $DATA/logs/$name.log" >&2
  exit 1
}
wait_ready api "$API"

# The demo: the provider sandbox (payments API + signed webhooks: applied, rejected, parked for review) and the
# outbound demo (merchant receiver + sample events: delivered, retrying, failed).
export SANDBOX_DEMO="${SANDBOX_DEMO:-1}"
launch sandbox src/sandbox/cli.ts
# M11: the demo shop's RabbitMQ queue endpoint, when the stack runs RabbitMQ (APIPAY_RABBITMQ=0 leaves it out).
if [ "${APIPAY_RABBITMQ:-1}" != 0 ] && [ -x /usr/lib/rabbitmq/bin/rabbitmq-server ]; then
  export RABBITMQ_URL="${RABBITMQ_URL:-amqp://${RABBITMQ_APP_USER:-apipay-merchant}:${RABBITMQ_APP_PASSWORD:-local-broker-pw-7c41d2}@127.0.0.1:${RABBITMQ_PORT:-5672}}"
else
  unset RABBITMQ_URL
fi
launch demo-outbound scripts/demo/outbound.ts
# C10: the URLs are printed once every process answers its /readyz, not just the API.
wait_ready worker "$WORKER_METRICS"
wait_ready dispatcher "$DISPATCHER_METRICS"

# C1, C2: a portal link for the demo merchant (it opens once and expires in an hour, A15; `npm run apipay -- portal-link ACCT`
# makes another).
portal_link="$(APIPAY_API_URL="$API" npx tsx src/cli/index.ts portal-link acct_demo_shop --ttl 1h 2>/dev/null | head -n 1 || echo "(failed: npm run apipay -- portal-link acct_demo_shop)")"

# A25: how to sign in as each demo person of the stack's Keycloak (people approve money; API keys are for services).
if [ "${APIPAY_IDP:-1}" = 0 ]; then
  people="    People        none: APIPAY_IDP=0 runs no identity provider, so nobody can approve a proposal (dual control, A27)"
else
  people="$(node scripts/stack/keycloak-people.mjs scripts/stack/keycloak-realm.json "http://127.0.0.1:${KEYCLOAK_PORT:-8180}/realms/apipay")
                  a token for the admin API / CLI: the apipay-cli client (device flow), or see docs/access.md"
fi

traces="off (APIPAY_JAEGER=0)"
[ -n "${APIPAY_TRACE_URL:-}" ] && traces="Jaeger http://127.0.0.1:${JAEGER_UI_PORT:-16686}   one trace per payment, linked from the console: $APIPAY_TRACE_URL/<trace id>"
cat <<INFO

  ApiPay is running (profile $APIPAY_PROFILE)
    API           $API   (/healthz, /readyz, POST /webhooks/{provider})
    Admin API     $API/admin/v1   docs: $API/admin/v1/docs   OpenAPI: $API/admin/v1/openapi.json
                  token: ADMIN_TOKEN in $DATA/dev.env  (e.g. npm run apipay -- deliveries list)
    Console       $API/console   sign in with ADMIN_TOKEN (in $DATA/dev.env) or an operator key
    Portal        $API/portal    demo merchant acct_demo_shop: $portal_link
$people
    Temporal UI   $TEMPORAL_UI_URL
    Traces        $traces
    Metrics       api $API_METRICS/metrics   worker $WORKER_METRICS/metrics   dispatcher $DISPATCHER_METRICS/metrics
    Processes     ${started[*]}
    Logs          $DATA/logs/   (stack: npm run stack -- logs)

  Ctrl-C stops these processes; the stack keeps running until: npm run stop

INFO
tail -q -n 0 -F $(for n in "${started[@]}"; do echo "$DATA/logs/$n.log"; done) &
follower=$!
wait "$follower"
