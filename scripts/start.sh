#!/usr/bin/env bash
# npm start: installs what is missing, starts the stack, migrates, runs the API, worker and dispatcher with the
# demo (provider sandbox, merchant receiver, sample traffic), prints the URLs and follows the logs.
# Ctrl-C stops the processes it started; `npm run stop` also stops the stack.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"
cd "$ROOT"

ensure_node_deps
bash scripts/stack.sh up
load_dev_env
export APIPAY_PROFILE="${APIPAY_PROFILE:-config/demo.yaml}"
# A6: migrations (and the grants to the application role) as the owner; the processes as apipay_app.
export MIGRATION_DATABASE_URL="${MIGRATION_DATABASE_URL:-postgres://postgres@127.0.0.1:5433/apipay}"
export DATABASE_URL="${DATABASE_URL:-postgres://apipay_app@127.0.0.1:5433/apipay}"
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
stop_started() { bash scripts/stop-app.sh; exit 0; }
trap stop_started INT TERM

launch api src/processes/api.ts
launch worker src/processes/worker.ts
launch dispatcher src/processes/dispatcher.ts

API="http://${API_HOST:-127.0.0.1}:${API_PORT:-3000}"
for _ in $(seq 1 120); do
  curl -fsS "$API/readyz" >/dev/null 2>&1 && break
  kill -0 "$(cat "$DATA/pids/app-api.pid")" 2>/dev/null || { tail -n 20 "$DATA/logs/api.log"; echo "[start] FAILED api; log: $DATA/logs/api.log" >&2; exit 1; }
  sleep 0.5
done
curl -fsS "$API/readyz" >/dev/null || { echo "[start] FAILED api not ready: $(curl -s "$API/readyz"); log: $DATA/logs/api.log" >&2; exit 1; }

# The demo: the provider sandbox (payments API + signed webhooks: applied, rejected, parked for review) and the
# outbound demo (merchant receiver + sample events: delivered, retrying, failed).
export SANDBOX_DEMO="${SANDBOX_DEMO:-1}"
launch sandbox src/sandbox/cli.ts
launch demo-outbound scripts/demo/outbound.ts

cat <<INFO

  ApiPay is running (profile $APIPAY_PROFILE)
    API           $API   (/healthz, /readyz, /metrics, POST /webhooks/{provider})
    Admin API     $API/admin/v1   OpenAPI: $API/admin/v1/openapi.json
                  token: ADMIN_TOKEN in .data/dev.env  (e.g. npm run apipay -- deliveries list)
    Temporal UI   http://127.0.0.1:8233
    Metrics       worker http://127.0.0.1:${WORKER_METRICS_PORT:-9464}/metrics   dispatcher http://127.0.0.1:${DISPATCHER_METRICS_PORT:-9465}/metrics
    Processes     ${started[*]}
    Logs          $DATA/logs/   (stack: npm run stack -- logs)

  Ctrl-C stops these processes; the stack keeps running until: npm run stop

INFO
tail -q -n 0 -F $(for n in "${started[@]}"; do echo "$DATA/logs/$n.log"; done) &
wait
