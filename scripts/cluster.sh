#!/usr/bin/env bash
# Issue 34 (R22): a production-shaped cluster on one box, beside scripts/stack.sh and built from its recipes and
# caches (this script sources it): PostgreSQL primary + synchronous streaming standby (pg1, pg2), three KRaft Kafka
# nodes (kafka1..3, replication factor 3, min.insync.replicas 2), the Temporal server split into its services
# (temporal-frontend, temporal-history1/2, temporal-matching1/2, temporal-worker, 16 history shards, membership
# between them) with temporal-ui in front, and two of each ApiPay process (api1/2, worker1/2, dispatcher1/2).
# Ports in scripts/cluster/ports.sh (never the shared stack's); data in .data/cluster (APIPAY_CLUSTER_DATA).
#
#   scripts/cluster.sh up [NODE...]     start every node (or those named) that does not answer its health check;
#                                       a dead PostgreSQL node rejoins as a standby of the current primary
#   scripts/cluster.sh down             stop everything
#   scripts/cluster.sh status           one line per node: health, role, pid, RSS and CPU; exit 1 if one is down
#   scripts/cluster.sh stop NODE...     SIGTERM of those nodes (a graceful stop), waited for
#   scripts/cluster.sh kill NODE        kill -9 of the node (and its children); pg-primary names the current primary
#   scripts/cluster.sh promote          the PostgreSQL standby becomes the primary (after the primary died)
#   scripts/cluster.sh env              DATABASE_URL, KAFKA_BROKERS, TEMPORAL_ADDRESS of the cluster
# CLUSTER_OFFSET shifts every port; CLUSTER_KAFKA_BROKERS=2, CLUSTER_HISTORY_HOSTS, CLUSTER_MATCHING_HOSTS,
# CLUSTER_APP_REPLICAS (0: no ApiPay processes) make a smaller one (the reduced drill test).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CDATA="${APIPAY_CLUSTER_DATA:-$ROOT/.data/cluster$([ "${CLUSTER_OFFSET:-0}" = 0 ] || echo "-${CLUSTER_OFFSET}")}"
export APIPAY_DATA="$CDATA" APIPAY_IDP=0 APIPAY_STRIPE_MOCK=0 APIPAY_RABBITMQ=0
# The stack's variables and helpers (say, fail, wait_for, kill_hard, proc_alive, installs); its own ports unused.
# shellcheck source=stack.sh
. "$ROOT/scripts/stack.sh"
say() { printf '[cluster] %s\n' "$*"; }
fail() { printf '[cluster] FAILED %s\n' "$*" >&2; exit 1; }
for f in ports pg kafka temporal apps; do
  # shellcheck disable=SC1090
  . "$ROOT/scripts/cluster/$f.sh"
done
mkdir -p "$CDATA/logs" "$CDATA/pids"

node_healthy() {
  case "$1" in
    pg1|pg2) pg_node_healthy "$1" ;;
    kafka*) kafka_node_healthy "${1#kafka}" ;;
    temporal-*) temporal_node_healthy "$1" ;;
    *) app_healthy "$1" ;;
  esac
}
healthy_within_node() {
  local deadline=$(( $(date +%s) + $2 ))
  until node_healthy "$1"; do [ "$(date +%s)" -ge "$deadline" ] && return 1; sleep 1; done
}
node_pid() {
  case "$1" in pg1|pg2) pg_node_pid "$1" ;; *) [ -f "$PIDS/$1.pid" ] && cat "$PIDS/$1.pid" ;; esac
}
node_alive() { case "$1" in pg1|pg2) pg_node_alive "$1" ;; *) pid_alive "$1" ;; esac; }
resolve() { case "$1" in pg-primary) pg_primary ;; pg-standby) pg_other "$(pg_primary)" ;; *) echo "$1" ;; esac; }
known() { grep -qx "$1" <<<"$(all_nodes)"; }

# up [NODE...]: infrastructure first (each layer waits for the one below), then the apps.
cluster_up() {
  local want=("$@") n
  [ ${#want[@]} -gt 0 ] || mapfile -t want < <(all_nodes)
  for n in "${want[@]}"; do known "$n" || fail "unknown node $n (nodes: $(all_nodes | tr '\n' ' '))"; done
  has() { grep -qx "$1" <<<"$(printf "%s\n" "${want[@]}")"; }
  # PostgreSQL: the primary before the standby.
  local primary; primary="$(pg_primary)"
  has "$primary" && start_pg_node "$primary"
  has "$(pg_other "$primary")" && start_pg_node "$(pg_other "$primary")"
  # Kafka: all three JVMs at once, then each waited for.
  local k started=()
  for k in 1 2 3; do has "kafka$k" && ! { pid_alive "kafka$k" && node_healthy "kafka$k"; } && { start_kafka_node "$k"; started+=("$k"); }; done
  for k in "${started[@]}"; do wait_for "kafka$k" "$LOGS/kafka$k.log" 300 kafka_node_healthy "$k"; say "kafka$k: up (port $(kafka_port "$k"))"; done
  [ ${#started[@]} -gt 0 ] && [ "${#started[@]}" = 3 ] && wait_kafka
  # Temporal: the schema once, then every service process at once; each waited for.
  local t tstarted=()
  for t in "${want[@]}"; do
    case "$t" in temporal-ui) ;; temporal-*)
      node_alive "$t" && node_healthy "$t" && continue
      [ ${#tstarted[@]} -eq 0 ] && { install_temporal; install_temporal_server; temporal_schema; }
      start_temporal_node "$t"; tstarted+=("$t")
      [ ${#tstarted[@]} -eq 1 ] && wait_for "$t" "$LOGS/$t.log" 60 t_metadata_written ;;
    esac
  done
  for t in "${tstarted[@]}"; do wait_for "$t" "$LOGS/$t.log" 180 temporal_node_healthy "$t"; say "$t: up"; done
  has temporal-frontend && temporal_namespace # idempotent: the namespace and its search attributes
  if has temporal-ui && ! { node_alive temporal-ui && node_healthy temporal-ui; }; then
    start_temporal_node temporal-ui; wait_for temporal-ui "$LOGS/temporal-ui.log" 30 port_open "$T_UI"; say "temporal-ui: up (http://127.0.0.1:$T_UI)"
  fi
  # ApiPay: every process at once, then each waited for (readyz).
  local a astarted=()
  for a in "${want[@]}"; do
    case "$a" in api*|worker*|dispatcher*) node_alive "$a" && node_healthy "$a" && continue; start_app_node "$a"; astarted+=("$a") ;; esac
  done
  for a in "${astarted[@]}"; do wait_for "$a" "$LOGS/$a.log" 240 app_healthy "$a"; say "$a: ready (port $(app_port "$(app_name "$a")" "$(app_index "$a")"))"; done
}

cluster_kill() {
  local node pid victims; node="$(resolve "$1")"; known "$node" || fail "unknown node $1"
  pid="$(node_pid "$node")" && [ -n "$pid" ] && proc_alive "$pid" || fail "$node is not running"
  case "$node" in
    pg1|pg2) victims="$pid $(ps -o pid= --ppid "$pid" 2>/dev/null | tr '\n' ' ')"; kill -KILL $victims 2>/dev/null || true ;;
    *) kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true ;;
  esac
  say "$node: kill -9 (pid $pid)"
}

cluster_stop() {
  local n pid
  for n in "$@"; do
    n="$(resolve "$n")"; known "$n" || fail "unknown node $n"
    case "$n" in
      pg1|pg2) "${PG_AS[@]}" "$PG_BIN/pg_ctl" -D "$(pg_dir "$n")" -m fast -w stop >/dev/null 2>&1 || true ;;
      *) pid_alive "$n" && { pid="$(cat "$PIDS/$n.pid")"; kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true; } ;;
    esac
  done
  for n in "$@"; do n="$(resolve "$n")"; pid="$(node_pid "$n" 2>/dev/null)" || continue; [ -n "$pid" ] && { kill_hard "$pid" || true; }; rm -f "$PIDS/$n.pid"; done
  say "stopped: $*"
}

cluster_down() {
  local n pid
  for n in $(all_nodes | tac); do
    case "$n" in
      pg1|pg2) [ -f "$(pg_dir "$n")/postmaster.pid" ] && "${PG_AS[@]}" "$PG_BIN/pg_ctl" -D "$(pg_dir "$n")" -m fast -w stop >/dev/null 2>&1 || true ;;
      *) if pid_alive "$n"; then pid="$(cat "$PIDS/$n.pid")"; kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true; fi ;;
    esac
  done
  for n in $(all_nodes); do pid="$(node_pid "$n" 2>/dev/null)" || continue; [ -n "$pid" ] && { kill_hard "$pid" 2>/dev/null || true; }; rm -f "$PIDS/$n.pid"; done
  say "down"
}

# status: health, role, pid, RSS (MiB) and CPU (% of one core since start, and seconds used) per node.
cluster_status() {
  local n pid state rc=0 note rss cpu time
  printf '%-20s %-5s %-8s %8s %7s %9s  %s\n' NODE STATE PID RSS_MiB CPU% CPU_S NOTE
  for n in $(all_nodes); do
    pid="$(node_pid "$n" 2>/dev/null || true)"; state=down; note=""; rss=-; cpu=-; time=-
    if node_healthy "$n"; then state=up; elif node_alive "$n"; then state=sick; note="process alive, health check unanswered"; fi
    [ "$state" = up ] || rc=1
    if [ -n "$pid" ] && proc_alive "$pid"; then
      # the node's processes: its process group (apps, JVMs, Temporal) or the postmaster and its backends
      local pids; if [[ "$n" == pg* ]]; then pids="$pid $(ps -o pid= --ppid "$pid" | tr '\n' ' ')"; else pids="$(ps -o pid= -g "$pid" | tr '\n' ' ')"; fi
      read -r rss cpu time < <(ps -o rss=,pcpu=,cputimes= -p "$(echo $pids | tr ' ' ,)" | awk '{r+=$1; c+=$2; t+=$3} END {printf "%d %.1f %d\n", r/1024, c, t}')
    fi
    case "$n" in pg1|pg2) [ "$state" = up ] && note="$(pg_status_note "$n")" ;; kafka*) kafka_is_broker "${n#kafka}" || note="controller only" ;; esac
    printf '%-20s %-5s %-8s %8s %7s %9s  %s\n' "$n" "$state" "${pid:--}" "$rss" "$cpu" "$time" "$note"
  done
  return $rc
}

case "${1:-status}" in
  up) shift; cluster_up "$@" ;;
  down) cluster_down ;;
  status) cluster_status ;;
  kill) [ -n "${2:-}" ] || fail "usage: $0 kill NODE"; cluster_kill "$2" ;;
  promote) pg_promote ;;
  env)
    echo "DATABASE_URL=$(app_database_url)"; echo "KAFKA_BROKERS=$(kafka_brokers)"; echo "TEMPORAL_ADDRESS=127.0.0.1:$T_FRONTEND"
    echo "TEMPORAL_UI_URL=http://127.0.0.1:$T_UI"; echo "CLUSTER_DATA=$CDATA"; echo "CLUSTER_PG_DIR=$PG_CLUSTER_DIR"
    echo "PG_PRIMARY=$(pg_primary)"; echo "KAFKA_NODE_IDS=$(seq -s, 1 "$KAFKA_NODES")" ;;
  stop) shift; cluster_stop "$@" ;;
  nodes) all_nodes ;;
  *) echo "usage: $0 up [NODE...]|stop NODE...|down|status|kill NODE|promote|env|nodes" >&2; exit 2 ;;
esac
