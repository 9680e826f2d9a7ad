# Issue 34 (R22): the ApiPay processes of scripts/cluster.sh: api1/api2, worker1/worker2, dispatcher1/dispatcher2
# (src/workers/*.ts via tsx), each on its own ports, reaching PostgreSQL through both hosts with
# target_session_attrs=primary (see app_database_url), all three Kafka brokers and the Temporal frontend. Their environment: the file
# $CDATA/apps.env when present (the drill writes its profile and secrets there), else .data/dev.env's secrets and
# config/demo.yaml. Each runs in its own session (kill NODE reaches its whole process group).
# shellcheck shell=bash
app_name() { echo "${1%%[0-9]*}"; }
app_index() { echo "${1##*[a-z]}"; }
app_healthy() { local p; p="$(app_port "$(app_name "$1")" "$(app_index "$1")")"; curl -fsS -m 3 "http://127.0.0.1:$p/readyz" >/dev/null 2>&1; }
# target_session_attrs=primary, not read-write: postgres.js 3.4.9 takes read-write to mean
# default_transaction_read_only=off, which a hot standby of PostgreSQL 14+ reports too (libpq also requires
# in_hot_standby=off). With read-write the first drill (seed 1) opened pool connections to the rejoined standby
# after the promotion and every write failed with 25006 "cannot execute ... in a read-only transaction" until the
# end: 12 of 1,396 acknowledged webhooks settled. primary checks in_hot_standby, which PostgreSQL 15 reports.
app_database_url() { echo "postgres://postgres@$(pg_hosts)/apipay?target_session_attrs=primary"; }

# Once per set of migrations (the journal's hash), not at every app restart.
migrate_once() {
  local want; want="$(sha1sum "$ROOT/drizzle/meta/_journal.json" | cut -c1-40)"
  [ "$(cat "$CDATA/migrated" 2>/dev/null)" = "$want" ] && return
  (cd "$ROOT" && node --import tsx src/db/migrate.ts "$(app_database_url)") >"$LOGS/migrate.log" 2>&1 \
    || { log_tail "$LOGS/migrate.log"; fail "apps: migration failed; log: $LOGS/migrate.log"; }
  echo "$want" >"$CDATA/migrated"
}

start_app_node() {
  local node="$1" app index log="$LOGS/$1.log" port
  app="$(app_name "$node")"; index="$(app_index "$node")"; port="$(app_port "$app" "$index")"
  if pid_alive "$node"; then
    healthy_within_node "$node" "$HEALTH_GRACE_S" && return 0
    say "$node: alive but not ready for ${HEALTH_GRACE_S}s: restarting it"; kill -KILL -- "-$(cat "$PIDS/$node.pid")" 2>/dev/null || true
  fi
  migrate_once
  local env_file="$CDATA/apps.env"
  [ -f "$env_file" ] || { load_dev_env; env_file=""; }
  (
    set -a
    [ -n "$env_file" ] && . "$env_file"
    NODE_ENV="${NODE_ENV:-development}" LOG_LEVEL="${LOG_LEVEL:-warn}" APIPAY_IDP=0
    APIPAY_PROFILE="${APIPAY_PROFILE:-$ROOT/config/demo.yaml}"
    DATABASE_URL="$(app_database_url)" DATABASE_POOL_MAX="${DATABASE_POOL_MAX:-8}"
    TEMPORAL_ADDRESS="127.0.0.1:$T_FRONTEND" TEMPORAL_UI_URL="http://127.0.0.1:$T_UI" KAFKA_BROKERS="$(kafka_brokers)"
    API_HOST=127.0.0.1 API_PORT="$(app_port api "$index")" API_METRICS_PORT="$(api_metrics_port "$index")"
    WORKER_METRICS_PORT="$(app_port worker "$index")" DISPATCHER_METRICS_PORT="$(app_port dispatcher "$index")"
    OTEL_SERVICE_INSTANCE_ID="$node"
    set +a
    cd "$ROOT" && exec setsid node --import tsx "src/workers/$app.ts" >>"$log" 2>&1 </dev/null
  ) &
  echo $! >"$PIDS/$node.pid"
}
