# APIPAY_TEMPORAL=server for scripts/stack.sh (sourced by it; uses its say/fail/need/wait_for/... helpers):
# the production-shaped Temporal, the server 1.29.1 built from source with persistence and visibility on the
# stack's PostgreSQL (databases temporal and temporal_visibility, schemas set up by the server's own SQL tool),
# and the Temporal UI server beside it. Same ports as the dev-server mode: frontend $TEMPORAL_PORT, UI
# $TEMPORAL_UI_PORT; the server's internal services take eight free ports picked at each start, as the dev
# server does (see scripts/stack/temporal-server/config/postgres.yaml).

TEMPORAL_SERVER_VERSION="v1.29.1"
TEMPORAL_UI_VERSION="v2.42.1"
TEMPORAL_HISTORY_SHARDS="${TEMPORAL_HISTORY_SHARDS:-4}"
TEMPORAL_SERVER_DIR="$CACHE/temporal-server-$TEMPORAL_SERVER_VERSION"
# A31: ApiPay's own main package over go.temporal.io/server $TEMPORAL_SERVER_VERSION (scripts/go/temporal-server:
# the IdP claim mapper and authorizer); the binary is named by a hash of its sources, so a change rebuilds it.
TEMPORAL_AUTHZ_SRC="$ROOT/scripts/go/temporal-server"
temporal_authz_hash() { (cd "$TEMPORAL_AUTHZ_SRC" && cat go.mod go.sum $(ls *.go | grep -v _test.go) | sha256sum | cut -c1-12); }
TEMPORAL_SERVER_BIN="$TEMPORAL_SERVER_DIR/bin/temporal-server-apipay-$(temporal_authz_hash)"
# The server's own worker reaches the internal frontend (no token: the system caller). It is also the address the
# test suite uses in this mode (scripts/test.sh), so only the public frontend on $TEMPORAL_PORT asks for tokens.
TEMPORAL_SYSTEM_PORT="${TEMPORAL_SYSTEM_PORT:-$((TEMPORAL_PORT - 1000))}"
TEMPORAL_SQL_TOOL="$TEMPORAL_SERVER_DIR/bin/temporal-sql-tool"
TEMPORAL_SCHEMA="$TEMPORAL_SERVER_DIR/schema/postgresql/v12"
TEMPORAL_UI_BIN="$CACHE/bin/temporal-ui-server-$TEMPORAL_UI_VERSION"
TEMPORAL_SERVER_CONF="$ROOT/scripts/stack/temporal-server"
TEMPORAL_DB="${TEMPORAL_DB:-temporal}"
TEMPORAL_VISIBILITY_DB="${TEMPORAL_VISIBILITY_DB:-temporal_visibility}"

# go_build NAME LOG PACKAGE@VERSION...: go install into a scratch GOBIN; the caller moves the binaries.
go_build() {
  local name="$1" log="$2"; shift 2
  rm -rf "$CACHE/gobin-$name" && mkdir -p "$CACHE/gobin-$name"
  GOBIN="$CACHE/gobin-$name" go install "$@" >"$log" 2>&1 \
    || { log_tail "$log"; fail "$name: go install failed; log: $log"; }
}

install_temporal_server() {
  local log="$LOGS/install-temporal-server.log" gobin="$CACHE/gobin-temporal-server"
  if [ ! -x "$TEMPORAL_SQL_TOOL" ] || [ ! -d "$TEMPORAL_SCHEMA" ]; then
    need go temporal-server "the Temporal SQL tool is built with go install"
    say "temporal-server: building the Temporal SQL tool $TEMPORAL_SERVER_VERSION with go install (once)"
    go_build temporal-server "$log" "go.temporal.io/server/cmd/tools/sql@$TEMPORAL_SERVER_VERSION"
    # The versioned schemas ship in the module, not in the binaries: keep a copy beside them.
    local mod; mod="$(go env GOMODCACHE)/go.temporal.io/server@$TEMPORAL_SERVER_VERSION"
    [ -d "$mod/schema/postgresql/v12" ] || fail "temporal-server: schemas not found in $mod; log: $log"
    rm -rf "$TEMPORAL_SERVER_DIR/schema" && mkdir -p "$TEMPORAL_SERVER_DIR/bin" "$TEMPORAL_SERVER_DIR/schema/postgresql"
    cp -R "$mod/schema/postgresql/v12" "$TEMPORAL_SERVER_DIR/schema/postgresql/" && chmod -R u+w "$TEMPORAL_SERVER_DIR/schema"
    mv "$gobin/sql" "$TEMPORAL_SQL_TOOL"
    rm -rf "$gobin"
  fi
  if [ ! -x "$TEMPORAL_SERVER_BIN" ]; then
    need go temporal-server "ApiPay's Temporal server is built with go build (scripts/go/temporal-server)"
    say "temporal-server: building ApiPay's Temporal server (go.temporal.io/server $TEMPORAL_SERVER_VERSION + scripts/go/temporal-server; about 5 minutes, once per change)"
    mkdir -p "$TEMPORAL_SERVER_DIR/bin"
    (cd "$TEMPORAL_AUTHZ_SRC" && GOFLAGS=-mod=readonly go build -o "$TEMPORAL_SERVER_BIN.tmp" .) >"$log" 2>&1 \
      || { log_tail "$log"; fail "temporal-server: go build failed; log: $log"; }
    find "$TEMPORAL_SERVER_DIR/bin" -name 'temporal-server-apipay-*' ! -name "$(basename "$TEMPORAL_SERVER_BIN").tmp" -delete
    mv "$TEMPORAL_SERVER_BIN.tmp" "$TEMPORAL_SERVER_BIN"
  fi
  if [ ! -x "$TEMPORAL_UI_BIN" ]; then
    need go temporal-ui "the Temporal UI server is built with go install"
    say "temporal-ui: building the Temporal UI server $TEMPORAL_UI_VERSION with go install (about 1 minute, once)"
    go_build temporal-ui "$LOGS/install-temporal-ui.log" "github.com/temporalio/ui-server/v2/cmd/server@$TEMPORAL_UI_VERSION"
    mkdir -p "$CACHE/bin" && mv "$CACHE/gobin-temporal-ui/server" "$TEMPORAL_UI_BIN" && rm -rf "$CACHE/gobin-temporal-ui"
  fi
}

# free_ports N FROM: the first N loopback ports from FROM up that can be bound (all held open until all are
# chosen). Below 32768: Temporal stores membership ports as a PostgreSQL smallint, so ephemeral ports fail.
free_ports() {
  node -e 'const net = require("node:net"); const n = Number(process.argv[1]); let port = Number(process.argv[2]); const held = [];
    const next = () => {
      if (held.length === n) { console.log(held.map((s) => s.address().port).join(" ")); held.forEach((s) => s.close()); return; }
      if (port > 32767) { console.error("no free port below 32768"); process.exit(1); }
      const s = net.createServer(); const p = port++;
      s.once("error", next); s.listen(p, "127.0.0.1", () => { held.push(s); next(); }); };
    next();' "$1" "$2"
}

psql_q() { "$PG_BIN/psql" -h 127.0.0.1 -p "$PGPORT" -U postgres -tAc "$2" "$1" 2>/dev/null; }

# setup_temporal_db DB SCHEMA_SUBDIR: create the database, the base schema and every versioned update (idempotent).
setup_temporal_db() {
  local db="$1" dir="$TEMPORAL_SCHEMA/$2/versioned" log="$LOGS/temporal-schema.log"
  local sql=("$TEMPORAL_SQL_TOOL" --plugin postgres12 --ep 127.0.0.1 -p "$PGPORT" -u postgres --db "$db")
  if ! psql_q postgres "SELECT 1 FROM pg_database WHERE datname='$db'" | grep -q 1; then
    "${sql[@]}" create-database >>"$log" 2>&1 || { log_tail "$log"; fail "temporal-server: create-database $db failed; log: $log"; }
  fi
  if ! psql_q "$db" "SELECT 1 FROM pg_tables WHERE tablename='schema_version'" | grep -q 1; then
    "${sql[@]}" setup-schema -v 0.0 >>"$log" 2>&1 || { log_tail "$log"; fail "temporal-server: setup-schema $db failed; log: $log"; }
  fi
  "${sql[@]}" update-schema -d "$dir" >>"$log" 2>&1 || { log_tail "$log"; fail "temporal-server: update-schema $db failed; log: $log"; }
}

# The shard count is fixed when the databases are created: refuse a mismatch instead of corrupting routing.
check_shard_count() {
  local have; have="$(psql_q "$TEMPORAL_DB" "SELECT count(*) FROM shards" || echo 0)"
  [ "${have:-0}" = 0 ] || [ "$have" = "$TEMPORAL_HISTORY_SHARDS" ] \
    || fail "temporal-server: the temporal database has $have history shards, TEMPORAL_HISTORY_SHARDS=$TEMPORAL_HISTORY_SHARDS (drop databases temporal and temporal_visibility to change it)"
}

start_temporal_server() {
  # Namespace and search attributes are the system's calls: through the internal frontend (no token).
  local log="$LOGS/temporal.log" addr="127.0.0.1:$TEMPORAL_SYSTEM_PORT"
  install_temporal
  install_temporal_server
  # R16: a live pid that does not answer its health check is stopped and started again (scripts/stack.sh).
  if ! pid_alive temporal || ! up_or_restart temporal; then
    check_port_free temporal "$TEMPORAL_PORT"
    setup_temporal_db "$TEMPORAL_DB" temporal
    setup_temporal_db "$TEMPORAL_VISIBILITY_DB" visibility
    check_shard_count
    # A window of ten ports per frontend port (mod 1000) keeps stacks on different ports apart.
    check_port_free temporal "$TEMPORAL_SYSTEM_PORT"
    local internal; internal="$(free_ports 10 $(( 20000 + (TEMPORAL_PORT % 1000) * 12 )))" || fail "temporal: could not pick free ports for its internal services"
    # A31: with the stack's IdP the public frontend verifies its tokens (scripts/go/temporal-server/settings.go);
    # APIPAY_IDP=0 runs it unprotected, as the stock server did.
    local auth=(--allow-no-auth)
    [ "$IDP_ENABLED" = 0 ] || auth=()
    TEMPORAL_PORT="$TEMPORAL_PORT" PGPORT="$PGPORT" TEMPORAL_HISTORY_SHARDS="$TEMPORAL_HISTORY_SHARDS" \
      TEMPORAL_INTERNAL_PORTS="$internal" TEMPORAL_SYSTEM_PORT="$TEMPORAL_SYSTEM_PORT" \
      TEMPORAL_DB="$TEMPORAL_DB" TEMPORAL_VISIBILITY_DB="$TEMPORAL_VISIBILITY_DB" \
      TEMPORAL_DYNAMIC_CONFIG="$TEMPORAL_SERVER_CONF/dynamicconfig.yaml" \
      TEMPORAL_AUTH_ISSUER="$([ "$IDP_ENABLED" = 0 ] || echo "${TEMPORAL_AUTH_ISSUER:-http://127.0.0.1:$KEYCLOAK_PORT/realms/apipay}")" \
      TEMPORAL_AUTH_SERVICE_CLIENTS="${TEMPORAL_AUTH_SERVICE_CLIENTS:-apipay-temporal-service}" \
      nohup "$TEMPORAL_SERVER_BIN" --root "$TEMPORAL_SERVER_CONF" --config config --env postgres "${auth[@]}" start \
      >"$log" 2>&1 </dev/null &
    echo $! >"$PIDS/temporal.pid"
  fi
  wait_for temporal "$log" 120 temporal_healthy
  "$TEMPORAL_BIN" operator namespace describe --address "$addr" --namespace default >/dev/null 2>&1 \
    || "$TEMPORAL_BIN" operator namespace create --address "$addr" --namespace default --retention 72h >>"$log" 2>&1 || true
  # A new namespace reaches the frontend's namespace cache within ~10 s; until then attribute calls fail.
  wait_for temporal "$log" 60 register_search_attributes "$addr"
  say "temporal: up (ApiPay's server $TEMPORAL_SERVER_VERSION on PostgreSQL :$PGPORT, $TEMPORAL_HISTORY_SHARDS history shards, port $TEMPORAL_PORT$([ "$IDP_ENABLED" = 0 ] && echo ', no authorization (APIPAY_IDP=0)' || echo ", IdP tokens required; system frontend 127.0.0.1:$TEMPORAL_SYSTEM_PORT"))"
}

# register_search_attributes ADDRESS: creates the missing ones (the same list the dev server gets at start).
register_search_attributes() {
  local have entry
  have="$("$TEMPORAL_BIN" operator search-attribute list --address "$1" --namespace default 2>/dev/null)" || return 1
  for entry in "${SEARCH_ATTRIBUTES[@]}"; do # Name=Type, from scripts/stack/search-attributes.txt
    grep -qw "${entry%%=*}" <<<"$have" && continue
    "$TEMPORAL_BIN" operator search-attribute create --address "$1" --namespace default --name "${entry%%=*}" \
      --type "${entry#*=}" >>"$LOGS/temporal.log" 2>&1 || return 1
  done
}

# Started after Keycloak answers (scripts/stack.sh up): the UI server reads the issuer's discovery document at start.
start_temporal_ui() {
  local log="$LOGS/temporal-ui.log"
  if pid_alive temporal-ui && up_or_restart temporal-ui; then say "temporal-ui: up (http://127.0.0.1:$TEMPORAL_UI_PORT)"; return; fi
  check_port_free temporal-ui "$TEMPORAL_UI_PORT"
  # A31: signs people in at the stack's Keycloak (the demo realm's public client secret); APIPAY_IDP=0: no sign-in.
  local issuer=""; [ "$IDP_ENABLED" = 0 ] || issuer="${TEMPORAL_AUTH_ISSUER:-http://127.0.0.1:$KEYCLOAK_PORT/realms/apipay}"
  TEMPORAL_PORT="$TEMPORAL_PORT" TEMPORAL_UI_PORT="$TEMPORAL_UI_PORT" TEMPORAL_UI_OIDC_ISSUER="$issuer" \
    TEMPORAL_UI_OIDC_CLIENT_SECRET="${TEMPORAL_UI_OIDC_CLIENT_SECRET:-apipay-temporal-ui-demo-secret}" \
    nohup "$TEMPORAL_UI_BIN" --root "$TEMPORAL_SERVER_CONF" --config ui --env apipay start >"$log" 2>&1 </dev/null &
  echo $! >"$PIDS/temporal-ui.pid"
  wait_for temporal-ui "$log" 30 port_open "$TEMPORAL_UI_PORT"
  say "temporal-ui: up (http://127.0.0.1:$TEMPORAL_UI_PORT)"
}
