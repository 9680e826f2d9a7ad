#!/usr/bin/env bash
# The local stack without Docker: PostgreSQL 15, Temporal dev server + UI, Kafka 4.1.1 (KRaft), and the Java
# time-skipping test server. Usage: scripts/stack.sh up|down|status|logs [service]
# R18: APIPAY_JAEGER=1 also runs Jaeger (in-memory, UI 16686, OTLP/HTTP 4318; scripts/stack/jaeger.sh); npm start sets
# it. `up jaeger` / `down jaeger` start or stop Jaeger alone.
# A25: Keycloak 26 (the OpenID Connect provider: scripts/stack/keycloak.sh) on 127.0.0.1:8180 with the `apipay` demo
# realm; started first in the background, waited for last. APIPAY_IDP=0 leaves it out. `up keycloak` starts it alone.
# I15: stripe-mock (Stripe's API mock: scripts/stack/stripe-mock.sh) on 127.0.0.1:12111 for the Stripe adapter's tests;
# not essential (a failed build is one line, and the Stripe tests skip). APIPAY_STRIPE_MOCK=0 leaves it out.
# M11: RabbitMQ (Debian rabbitmq-server, scripts/stack/rabbitmq.sh) on 127.0.0.1:$RABBITMQ_PORT (5672), the broker of
# the `rabbitmq` destination tests and demo; APIPAY_RABBITMQ=0 leaves it out, `up rabbitmq` / `down rabbitmq` alone.
# APIPAY_TEMPORAL=server runs the Temporal server on this PostgreSQL instead of the dev server, with the UI beside
# it on the same ports (scripts/stack/temporal-server.sh); APIPAY_TEMPORAL=dev (the default) the CLI's dev server.
#
# Installs what is missing into a cache outside the repository ($APIPAY_CACHE, default ~/.cache/apipay), keeps
# runtime data in .data/ (git-ignored), starts each service idempotently with a health wait, and on failure exits
# non-zero with a line naming the service and its log file.
# R16: a service counts as up only when it answers its health check (PostgreSQL: pg_isready; Temporal: `temporal
# operator cluster health`; Kafka: a metadata request, scripts/stack/kafka-health.mjs), never because its pid is
# alive: `up` restarts a service whose process is alive but has not answered for STACK_HEALTH_GRACE_S (default 15),
# and `status` reports the same checks.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${APIPAY_CACHE:-$HOME/.cache/apipay}"
DATA="${APIPAY_DATA:-$ROOT/.data}"
LOGS="$DATA/logs"
PIDS="$DATA/pids"

TEMPORAL_CLI_VERSION="v1.5.1"
KAFKA_VERSION="4.1.1"
TEST_SERVER_VERSION="1.31.0"
PG_BIN="${PG_BIN:-/usr/lib/postgresql/15/bin}"
TEMPORAL_MODE="${APIPAY_TEMPORAL:-dev}"

PGPORT="${PGPORT:-5433}"
TEMPORAL_PORT="${TEMPORAL_PORT:-7233}"
TEMPORAL_UI_PORT="${TEMPORAL_UI_PORT:-8233}"
KAFKA_PORT="${KAFKA_PORT:-9092}"
KAFKA_CONTROLLER_PORT="${KAFKA_CONTROLLER_PORT:-9093}"
KAFKA_TOPIC="${KAFKA_TOPIC:-apipay.outbound-webhooks.v1}"
KAFKA_PARTITIONS="${KAFKA_PARTITIONS:-6}"
# Search attributes operators filter on in the Temporal UI, one Name=Type a line, generated from
# src/shared/search-attributes.ts (npx tsx scripts/stack/search-attributes.ts; a unit test checks it is current).
mapfile -t SEARCH_ATTRIBUTES <"$ROOT/scripts/stack/search-attributes.txt"

TEMPORAL_BIN="$CACHE/bin/temporal-$TEMPORAL_CLI_VERSION"
KAFKA_LIB="$CACHE/kafka-$KAFKA_VERSION/lib"
TEST_SERVER_LIB="$CACHE/temporal-test-server-$TEST_SERVER_VERSION/lib"
TEST_SERVER_WRAPPER="$CACHE/bin/temporal-test-server"

# PostgreSQL refuses to run as root: as root its data goes to a folder the postgres user can reach (a fresh clone
# may sit under a 0700 directory), keyed by this checkout's path, and .data/pg points to it.
if [ "$(id -u)" = 0 ]; then
  PG_DATA="${APIPAY_PG_DATA:-/var/lib/apipay/pg-$(printf %s "$ROOT" | sha1sum | cut -c1-10)}"
  PG_AS=(runuser -u postgres --)
else
  PG_DATA="${APIPAY_PG_DATA:-$DATA/pg}"
  PG_AS=()
fi

case "$TEMPORAL_MODE" in dev|server) ;; *) printf '[stack] FAILED APIPAY_TEMPORAL=%s: use dev or server\n' "$TEMPORAL_MODE" >&2; exit 2 ;; esac

say() { printf '[stack] %s\n' "$*"; }
fail() { printf '[stack] FAILED %s\n' "$*" >&2; exit 1; }
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
# alive: the process exists and is not a zombie (a killed child nobody reaped still answers kill -0).
proc_alive() { kill -0 "$1" 2>/dev/null && [ "$(ps -o stat= -p "$1" 2>/dev/null | cut -c1)" != Z ]; }
pid_alive() { [ -f "$PIDS/$1.pid" ] && proc_alive "$(cat "$PIDS/$1.pid")"; }
log_tail() { [ -f "$1" ] && tail -n 15 "$1" | sed 's/^/    | /' >&2 || true; }

# wait_for SERVICE LOG TIMEOUT CHECK...: polls CHECK until it succeeds; fails early if the process died.
wait_for() {
  local svc="$1" log="$2" timeout="$3"; shift 3
  local deadline=$(( $(date +%s) + timeout ))
  until "$@" >/dev/null 2>&1; do
    if [ -f "$PIDS/$svc.pid" ] && ! pid_alive "$svc"; then
      log_tail "$log"; fail "$svc: process exited during start; log: $log"
    fi
    [ "$(date +%s)" -ge "$deadline" ] && { log_tail "$log"; fail "$svc: not healthy after ${timeout}s; log: $log"; }
    sleep 0.3
  done
}

# A port already answering but not by our process means another program holds it (after a few seconds' grace
# for a process of ours that is still going away).
check_port_free() {
  local svc="$1" port="$2" deadline=$(( $(date +%s) + 5 ))
  while port_open "$port"; do
    [ "$(date +%s)" -ge "$deadline" ] && fail "$svc: port $port is already in use by another process; log: $LOGS/$svc.log"
    sleep 0.3
  done
}

# ---------------------------------------------------------------- health (R16)
HEALTH_GRACE_S="${STACK_HEALTH_GRACE_S:-15}"
pg_healthy() { "$PG_BIN/pg_isready" -q -t 3 -h 127.0.0.1 -p "$PGPORT" >/dev/null 2>&1; }
temporal_healthy() {
  timeout 10 "$TEMPORAL_BIN" operator cluster health --address "127.0.0.1:$TEMPORAL_PORT" --command-timeout 5s 2>/dev/null | grep -q SERVING
}
kafka_healthy() {
  # kafkajs is a project dependency; before npm ci only the port can be checked.
  [ -d "$ROOT/node_modules/kafkajs" ] || { port_open "$KAFKA_PORT"; return; }
  (cd "$ROOT" && KAFKA_BROKERS="127.0.0.1:$KAFKA_PORT" timeout 10 node scripts/stack/kafka-health.mjs) >/dev/null 2>&1
}
healthy() {
  case "$1" in
    postgresql) pg_healthy ;;
    temporal) temporal_healthy ;;
    kafka) kafka_healthy ;;
    jaeger) jaeger_healthy ;;
    keycloak) keycloak_healthy ;;
    stripe-mock) stripe_mock_healthy ;;
    rabbitmq) rabbitmq_healthy ;;
    *) port_open "$TEMPORAL_UI_PORT" ;; # temporal-ui (server mode): its HTTP port
  esac
}
# healthy_within SERVICE SECONDS: true as soon as the check passes, false if it never does in time.
healthy_within() {
  local deadline=$(( $(date +%s) + $2 ))
  until healthy "$1"; do [ "$(date +%s)" -ge "$deadline" ] && return 1; sleep 1; done
}

# kill_hard PID...: continue (a stopped process ignores TERM), TERM, then KILL what is left after 5 s.
kill_hard() {
  local pid
  for pid in "$@"; do kill -CONT "$pid" 2>/dev/null; kill -TERM "$pid" 2>/dev/null; done
  for _ in $(seq 1 50); do
    local left=0; for pid in "$@"; do proc_alive "$pid" && left=1; done
    [ "$left" = 0 ] && return; sleep 0.1
  done
  for pid in "$@"; do kill -KILL "$pid" 2>/dev/null; done
  for _ in $(seq 1 50); do
    local left=0; for pid in "$@"; do proc_alive "$pid" && left=1; done
    [ "$left" = 0 ] && return; sleep 0.1
  done
}

# up_or_restart SERVICE: the service's process is alive. True if it answers within the grace; otherwise it is
# stopped (hard) so the caller starts a fresh one.
up_or_restart() {
  local svc="$1" pid
  healthy_within "$svc" "$HEALTH_GRACE_S" && return 0
  if [ "$svc" = postgresql ]; then
    pid="$(pg_postmaster_pid)"
    say "postgresql: postmaster $pid is alive but pg_isready got no answer for ${HEALTH_GRACE_S}s: restarting it"
    # its backends too: a new postmaster refuses to start while they hold the old shared memory
    kill_hard "$pid" $(ps -o pid= --ppid "$pid" 2>/dev/null)
    rm -f "$PIDS/postgresql.pid"
  else
    pid="$(cat "$PIDS/$svc.pid")"
    say "$svc: pid $pid is alive but has not answered its health check for ${HEALTH_GRACE_S}s: restarting it"
    kill_hard "$pid"
    rm -f "$PIDS/$svc.pid"
  fi
  return 1
}
pg_postmaster_pid() { [ -f "$PG_DATA/postmaster.pid" ] && head -1 "$PG_DATA/postmaster.pid"; }
pg_alive() { local pid; pid="$(pg_postmaster_pid)" && [ -n "$pid" ] && proc_alive "$pid"; }

need() { command -v "$1" >/dev/null 2>&1 || fail "$2: '$1' not found on PATH ($3)"; }

# ---------------------------------------------------------------- installs (cached)
install_apt_postgres() {
  [ -x "$PG_BIN/initdb" ] && return
  say "postgresql: installing PostgreSQL 15 from Debian packages"
  if [ "$(id -u)" = 0 ]; then
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-15) >"$LOGS/install-postgresql.log" 2>&1 \
      || { log_tail "$LOGS/install-postgresql.log"; fail "postgresql: apt-get install failed; log: $LOGS/install-postgresql.log"; }
  else
    fail "postgresql: $PG_BIN/initdb missing; install it with: sudo apt-get install -y postgresql-15"
  fi
}

install_temporal() {
  [ -x "$TEMPORAL_BIN" ] && return
  need go temporal "the Temporal CLI is built with go install"
  say "temporal: building the Temporal CLI $TEMPORAL_CLI_VERSION with go install (about 3 minutes, once)"
  mkdir -p "$CACHE/bin" "$CACHE/gobin"
  GOBIN="$CACHE/gobin" go install "github.com/temporalio/cli/cmd/temporal@$TEMPORAL_CLI_VERSION" >"$LOGS/install-temporal.log" 2>&1 \
    || { log_tail "$LOGS/install-temporal.log"; fail "temporal: go install failed; log: $LOGS/install-temporal.log"; }
  mv "$CACHE/gobin/temporal" "$TEMPORAL_BIN"
}

# maven_libs NAME POM DEST: copies a pinned pom's runtime jars into DEST once (stamped by the pom's hash).
maven_libs() {
  local name="$1" pom="$2" dest="$3" stamp
  stamp="$(sha1sum "$pom" | cut -c1-40)"
  [ -f "$dest/.stamp" ] && [ "$(cat "$dest/.stamp")" = "$stamp" ] && return
  need mvn "$name" "the jars come from Maven Central"
  say "$name: resolving jars with Maven (once)"
  rm -rf "$dest" && mkdir -p "$dest"
  mvn -q -B -f "$pom" dependency:copy-dependencies -DoutputDirectory="$dest" >"$LOGS/install-$name.log" 2>&1 \
    || { log_tail "$LOGS/install-$name.log"; fail "$name: maven dependency resolution failed; log: $LOGS/install-$name.log"; }
  echo "$stamp" >"$dest/.stamp"
}

install_test_server() {
  maven_libs temporal-test-server "$ROOT/scripts/java/temporal-test-server/pom.xml" "$TEST_SERVER_LIB"
  mkdir -p "$CACHE/bin"
  local want
  want="$(printf '#!/usr/bin/env bash\n# Java Temporal test server with time skipping (generated by scripts/stack.sh)\nexec java -cp "%s/*" io.temporal.testserver.TestServer "$@"\n' "$TEST_SERVER_LIB")"
  if [ ! -x "$TEST_SERVER_WRAPPER" ] || [ "$(cat "$TEST_SERVER_WRAPPER")" != "$want" ]; then
    printf '%s\n' "$want" >"$TEST_SERVER_WRAPPER" && chmod +x "$TEST_SERVER_WRAPPER"
  fi
}

# ---------------------------------------------------------------- services
ensure_databases() {
  local db
  for db in apipay apipay_test; do
    "$PG_BIN/psql" -h 127.0.0.1 -p "$PGPORT" -U postgres -tAc "SELECT 1 FROM pg_database WHERE datname='$db'" | grep -q 1 \
      || "$PG_BIN/psql" -h 127.0.0.1 -p "$PGPORT" -U postgres -qc "CREATE DATABASE $db" >/dev/null
  done
}

start_postgres() {
  local log="$LOGS/postgresql.log"
  install_apt_postgres
  if pg_alive && up_or_restart postgresql; then
    ensure_databases # a database dropped while the server ran (a reset test database) comes back
    ensure_app_role
    say "postgresql: up (port $PGPORT, pg_isready answers)"; return
  fi
  check_port_free postgresql "$PGPORT"
  if [ ! -f "$PG_DATA/PG_VERSION" ]; then
    say "postgresql: initdb $PG_DATA"
    mkdir -p "$PG_DATA"
    [ "$(id -u)" = 0 ] && chown -R postgres:postgres "$(dirname "$PG_DATA")" && chmod 700 "$PG_DATA"
    "${PG_AS[@]}" "$PG_BIN/initdb" -D "$PG_DATA" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >"$log" 2>&1 \
      || { log_tail "$log"; fail "postgresql: initdb failed; log: $log"; }
  fi
  [ "$PG_DATA" != "$DATA/pg" ] && ln -sfn "$PG_DATA" "$DATA/pg"
  # The server log must be writable by postgres: it lives in the data folder, linked from .data/logs.
  ln -sfn "$PG_DATA/server.log" "$log"
  "${PG_AS[@]}" "$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$PG_DATA/server.log" -w -t 30 \
    -o "-h 127.0.0.1 -p $PGPORT -k $PG_DATA -c max_connections=300 -c fsync=on -c synchronous_commit=on" start >/dev/null 2>&1 \
    || { log_tail "$log"; fail "postgresql: pg_ctl start failed; log: $log"; }
  head -1 "$PG_DATA/postmaster.pid" >"$PIDS/postgresql.pid"
  ensure_databases
  ensure_app_role
  say "postgresql: up (port $PGPORT, databases apipay and apipay_test, role $APP_ROLE)"
}

# A6: the processes' own login role (no superuser, owns nothing); its grants come with every migration
# (src/db/grants.ts). Idempotent, and harmless to a running stack: it only creates the role when missing.
APP_ROLE="${DATABASE_APP_ROLE:-apipay_app}"
ensure_app_role() {
  "$PG_BIN/psql" -h 127.0.0.1 -p "$PGPORT" -U postgres -qtAc \
    "DO \$\$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$APP_ROLE') THEN CREATE ROLE $APP_ROLE LOGIN; END IF; END \$\$" >/dev/null \
    || fail "postgresql: could not create role $APP_ROLE; log: $LOGS/postgresql.log"
}

start_temporal() {
  local log="$LOGS/temporal.log"
  install_temporal
  if pid_alive temporal && up_or_restart temporal; then
    # A server started before a search attribute was added (O20: PaymentReference) gets the missing ones now.
    register_search_attributes "127.0.0.1:$TEMPORAL_PORT" || say "temporal: could not register the missing search attributes (log: $log)"
    say "temporal: up (port $TEMPORAL_PORT, cluster health SERVING, UI http://127.0.0.1:$TEMPORAL_UI_PORT)"; return
  fi
  check_port_free temporal "$TEMPORAL_PORT"; check_port_free temporal "$TEMPORAL_UI_PORT"
  mkdir -p "$DATA/temporal"
  local attrs=()
  for a in "${SEARCH_ATTRIBUTES[@]}"; do attrs+=(--search-attribute "$a"); done
  # setsid: its own session, so a Ctrl-C in the terminal of npm start stops the apps, never the stack (C10).
  nohup setsid "$TEMPORAL_BIN" server start-dev --ip 127.0.0.1 --port "$TEMPORAL_PORT" --ui-port "$TEMPORAL_UI_PORT" \
    --db-filename "$DATA/temporal/temporal.db" --sqlite-pragma journal_mode=wal --sqlite-pragma synchronous=normal \
    --namespace default --log-level warn "${attrs[@]}" >"$log" 2>&1 </dev/null &
  echo $! >"$PIDS/temporal.pid"
  wait_for temporal "$log" 60 temporal_healthy
  wait_for temporal "$log" 30 port_open "$TEMPORAL_UI_PORT"
  say "temporal: up (port $TEMPORAL_PORT, UI http://127.0.0.1:$TEMPORAL_UI_PORT)"
}

start_kafka() {
  local log="$LOGS/kafka.log" dir="$DATA/kafka"
  need java kafka "Kafka runs on the JVM; install a JDK (apt-get install -y default-jre-headless)"
  maven_libs kafka "$ROOT/scripts/java/kafka/pom.xml" "$KAFKA_LIB"
  if pid_alive kafka && up_or_restart kafka; then say "kafka: up (port $KAFKA_PORT, metadata answers)"; return; fi
  check_port_free kafka "$KAFKA_PORT"; check_port_free kafka "$KAFKA_CONTROLLER_PORT"
  mkdir -p "$dir/logs"
  cat >"$dir/server.properties" <<EOF
process.roles=broker,controller
node.id=1
listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT,CONTROLLER://127.0.0.1:$KAFKA_CONTROLLER_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
controller.quorum.bootstrap.servers=127.0.0.1:$KAFKA_CONTROLLER_PORT
log.dirs=$dir/logs
num.partitions=$KAFKA_PARTITIONS
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=false
EOF
  local java_opts=(-Xms256m -Xmx768m -Dlog4j2.configurationFile="$ROOT/scripts/stack/kafka-log4j2.xml")
  if [ ! -f "$dir/logs/meta.properties" ]; then
    say "kafka: formatting storage (once)"
    java "${java_opts[@]}" -cp "$KAFKA_LIB/*" kafka.tools.StorageTool format --standalone \
      -t "$(java -cp "$KAFKA_LIB/*" kafka.tools.StorageTool random-uuid 2>/dev/null)" \
      -c "$dir/server.properties" >"$log" 2>&1 || { log_tail "$log"; fail "kafka: storage format failed; log: $log"; }
  fi
  # setsid: see temporal above (C10).
  nohup setsid java "${java_opts[@]}" -cp "$KAFKA_LIB/*" kafka.Kafka "$dir/server.properties" >>"$log" 2>&1 </dev/null &
  echo $! >"$PIDS/kafka.pid"
  wait_for kafka "$log" 60 kafka_healthy
  say "kafka: up (port $KAFKA_PORT)"
}

ensure_topic() {
  # kafkajs (a project dependency) creates the topic idempotently and waits until the broker serves it.
  [ -d "$ROOT/node_modules/kafkajs" ] || { say "kafka: topic creation skipped (run npm ci first)"; return; }
  (cd "$ROOT" && KAFKA_BROKERS="127.0.0.1:$KAFKA_PORT" node scripts/stack/kafka-topic.mjs "$KAFKA_TOPIC" "$KAFKA_PARTITIONS") >>"$LOGS/kafka.log" 2>&1 \
    || { log_tail "$LOGS/kafka.log"; fail "kafka: could not create topic $KAFKA_TOPIC; log: $LOGS/kafka.log"; }
  say "kafka: topic $KAFKA_TOPIC ($KAFKA_PARTITIONS partitions)"
}

stop_one() {
  local svc="$1"
  if [ "$svc" = postgresql ]; then
    [ -f "$PG_DATA/postmaster.pid" ] && "${PG_AS[@]}" "$PG_BIN/pg_ctl" -D "$PG_DATA" -m fast -w stop >/dev/null 2>&1 && say "postgresql: stopped"
    rm -f "$PIDS/postgresql.pid"; return
  fi
  if pid_alive "$svc"; then
    local pid; pid="$(cat "$PIDS/$svc.pid")"
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null
    say "$svc: stopped"
  fi
  rm -f "$PIDS/$svc.pid"
}

# R16: up = answers its health check now; a live pid that does not answer is reported as such.
status_one() {
  local svc="$1" state=down note=""
  if healthy "$svc"; then state=up
  elif { [ "$svc" = postgresql ] && pg_alive; } || pid_alive "$svc"; then note=" (process alive, health check unanswered)"
  fi
  printf '%-12s %-5s log: %s%s\n' "$svc" "$state" "$LOGS/$svc.log" "$note"
  [ "$state" = up ]
}

# APIPAY_STACK=external: the services run elsewhere (docker-compose.temporal.yml); only wait until they answer.
wait_external() {
  for pair in "postgresql:$PGPORT" "temporal:$TEMPORAL_PORT" "temporal-ui:$TEMPORAL_UI_PORT" "kafka:$KAFKA_PORT"; do
    local svc="${pair%%:*}" port="${pair##*:}" deadline=$(( $(date +%s) + 90 ))
    until port_open "$port"; do
      [ "$(date +%s)" -ge "$deadline" ] && fail "$svc: nothing answers on 127.0.0.1:$port (APIPAY_STACK=external; docker compose -f docker-compose.temporal.yml ps)"
      sleep 1
    done
    say "$svc: answering on $port (external)"
  done
}

# shellcheck source=stack/temporal-server.sh
. "$ROOT/scripts/stack/temporal-server.sh"
# shellcheck source=stack/jaeger.sh
. "$ROOT/scripts/stack/jaeger.sh"
# shellcheck source=stack/keycloak.sh
. "$ROOT/scripts/stack/keycloak.sh"
# shellcheck source=stack/stripe-mock.sh
. "$ROOT/scripts/stack/stripe-mock.sh"
# shellcheck source=stack/rabbitmq.sh
. "$ROOT/scripts/stack/rabbitmq.sh"

# Issue 34: scripts/cluster.sh sources this file for its recipes (installs, health waits, kill_hard) and stops here.
if [ "${BASH_SOURCE[0]}" != "$0" ]; then return 0; fi

cmd="${1:-status}"
mkdir -p "$LOGS" "$PIDS"
if [ "${APIPAY_STACK:-native}" = external ] && [ "$cmd" = up ]; then
  wait_external; ensure_topic; install_test_server; exit 0
fi
case "$cmd" in
  up)
    # R18: `up jaeger` starts Jaeger alone (beside a stack that is already up).
    if [ "${2:-}" = jaeger ]; then start_jaeger; exit 0; fi
    if [ "${2:-}" = keycloak ]; then start_keycloak_bg; wait_keycloak; exit 0; fi
    if [ "${2:-}" = stripe-mock ]; then start_stripe_mock; exit 0; fi
    if [ "${2:-}" = rabbitmq ]; then start_rabbitmq; exit 0; fi
    start_keycloak_bg # A25: its JVM boots while the others start; waited for at the end
    start_postgres
    # A Temporal left running in the other mode would answer on the same port: say so rather than mix them.
    if pid_alive temporal && [ "$(cat "$PIDS/temporal.mode" 2>/dev/null || echo dev)" != "$TEMPORAL_MODE" ]; then
      fail "temporal: running in $(cat "$PIDS/temporal.mode" 2>/dev/null || echo dev) mode, APIPAY_TEMPORAL=$TEMPORAL_MODE asked; run scripts/stack.sh down first"
    fi
    echo "$TEMPORAL_MODE" >"$PIDS/temporal.mode"
    if [ "$TEMPORAL_MODE" = server ]; then start_temporal_server; else start_temporal; fi
    start_kafka
    ensure_topic
    start_rabbitmq
    install_test_server
    say "temporal-test-server: $TEST_SERVER_WRAPPER"
    if [ "${APIPAY_JAEGER:-0}" = 1 ]; then start_jaeger; fi
    start_stripe_mock
    wait_keycloak
    if [ "$TEMPORAL_MODE" = server ]; then start_temporal_ui; fi # A31: after the IdP, whose discovery document it reads at start
    ;;
  down)
    if [ "${2:-}" = jaeger ]; then stop_one jaeger; exit 0; fi
    if [ "${2:-}" = keycloak ]; then stop_one keycloak; exit 0; fi
    if [ "${2:-}" = stripe-mock ]; then stop_one stripe-mock; exit 0; fi
    if [ "${2:-}" = rabbitmq ]; then stop_rabbitmq; exit 0; fi
    stop_rabbitmq
    for s in stripe-mock keycloak jaeger kafka temporal-ui temporal postgresql; do stop_one "$s"; done ;;
  status)
    rc=0; svcs=(postgresql temporal kafka); [ "$TEMPORAL_MODE" = server ] && svcs=(postgresql temporal temporal-ui kafka)
    { [ "${APIPAY_JAEGER:-0}" = 1 ] || pid_alive jaeger; } && svcs+=(jaeger)
    { [ "$IDP_ENABLED" != 0 ] || pid_alive keycloak; } && svcs+=(keycloak)
    { { [ "$STRIPE_MOCK_ENABLED" != 0 ] && [ -x "$STRIPE_MOCK_BIN" ]; } || pid_alive stripe-mock; } && svcs+=(stripe-mock)
    { { [ "$RABBITMQ_ENABLED" != 0 ] && [ -x "$RABBITMQ_LIB/rabbitmq-server" ]; } || pid_alive rabbitmq; } && svcs+=(rabbitmq)
    for s in "${svcs[@]}"; do status_one "$s" || rc=1; done
    printf '%-12s %-5s %s\n' test-server "$([ -x "$TEST_SERVER_WRAPPER" ] && echo ready || echo absent)" "$TEST_SERVER_WRAPPER"
    exit $rc ;;
  logs)
    if [ -n "${2:-}" ]; then tail -n 100 -f "$LOGS/$2.log"; else tail -n 20 "$LOGS"/{postgresql,temporal,kafka}.log; fi ;;
  env)
    # Machine-readable locations for other scripts.
    echo "TEMPORAL_TEST_SERVER=$TEST_SERVER_WRAPPER"; echo "TEMPORAL_CLI=$TEMPORAL_BIN"; echo "APIPAY_LOGS=$LOGS"
    echo "APIPAY_IDP_ISSUER=$([ "$IDP_ENABLED" = 0 ] || echo "http://127.0.0.1:$KEYCLOAK_PORT/realms/apipay")"
    echo "STRIPE_MOCK_URL=$(stripe_mock_healthy && echo "http://127.0.0.1:$STRIPE_MOCK_PORT")"
    echo "RABBITMQ_URL=$({ [ "$RABBITMQ_ENABLED" = 0 ] || ! [ -x "$RABBITMQ_LIB/rabbitmq-server" ]; } || echo "amqp://$RABBITMQ_APP_USER:$RABBITMQ_APP_PASSWORD@127.0.0.1:$RABBITMQ_PORT")" ;;
  *) echo "usage: $0 up|down|status|logs [service]|env" >&2; exit 2 ;;
esac
