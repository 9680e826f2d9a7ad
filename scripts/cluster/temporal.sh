# Issue 34 (R22): the Temporal server's services as separate processes for scripts/cluster.sh: temporal-frontend,
# temporal-history1..N, temporal-matching1..N, temporal-worker (the internal worker service), on the cluster's
# PostgreSQL (scripts/cluster/temporal/config/cluster.yaml, 16 history shards), and temporal-ui in front. Uses the
# server, SQL tool and UI that scripts/stack/temporal-server.sh builds and caches. A history or matching host counts
# as healthy when its gRPC port answers and its membership row is fresh (it is in the ring).
# shellcheck shell=bash
CLUSTER_SHARDS="${CLUSTER_HISTORY_SHARDS:-16}"
T_CONF="$ROOT/scripts/cluster/temporal"

t_service() { local n="${1#temporal-}"; echo "${n%%[0-9]*}"; }   # temporal-history2 → history
t_index() { local n="${1#temporal-}"; n="${n##*[a-z]}"; echo "${n:-1}"; }
# role numbers of cluster_membership: 1 frontend, 2 history, 3 matching, 4 worker
t_role() { case "$1" in frontend) echo 1 ;; history) echo 2 ;; matching) echo 3 ;; worker) echo 4 ;; esac; }

t_in_ring() { # t_in_ring SERVICE MEMBERSHIP_PORT: a heartbeat in the last 20 s (rpc_port is the membership port)
  local primary; primary="$(pg_primary)"
  [ "$(pg_psql "$primary" "select count(*) from cluster_membership where role = $(t_role "$1") and rpc_port = $2 and last_heartbeat > now() at time zone 'utc' - interval '20 seconds'" temporal 2>/dev/null)" -ge 1 ] 2>/dev/null
}

temporal_node_healthy() {
  local node="$1" svc ports
  case "$node" in
    temporal-frontend)
      timeout 10 "$TEMPORAL_BIN" operator cluster health --address "127.0.0.1:$T_FRONTEND" --command-timeout 5s 2>/dev/null | grep -q SERVING ;;
    temporal-ui) port_open "$T_UI" ;;
    *) svc="$(t_service "$node")"; ports=($(t_ports "$svc" "$(t_index "$node")"))
       # the worker service serves no gRPC: its membership port then
       port_open "${ports[$([ "$svc" = worker ] && echo 1 || echo 0)]}" && t_in_ring "$svc" "${ports[1]}" ;;
  esac
}

temporal_schema() {
  # The SQL tool and psql_q of temporal-server.sh, pointed at the current primary.
  PGPORT="$(pg_port_of "$(pg_primary)")"
  TEMPORAL_HISTORY_SHARDS="$CLUSTER_SHARDS"
  setup_temporal_db temporal temporal
  setup_temporal_db temporal_visibility visibility
  check_shard_count
}

start_temporal_node() {
  local node="$1" log="$LOGS/$1.log" svc ports=()
  install_temporal; install_temporal_server
  if pid_alive "$node"; then
    healthy_within_node "$node" "$HEALTH_GRACE_S" && return 0
    say "$node: alive but unanswered for ${HEALTH_GRACE_S}s: restarting it"; kill_hard "$(cat "$PIDS/$node.pid")" || true
  fi
  if [ "$node" = temporal-ui ]; then
    TEMPORAL_PORT="$T_FRONTEND" TEMPORAL_UI_PORT="$T_UI" \
      nohup setsid "$TEMPORAL_UI_BIN" --root "$TEMPORAL_SERVER_CONF" --config ui --env apipay start >"$log" 2>&1 </dev/null &
    echo $! >"$PIDS/$node.pid"; return
  fi
  svc="$(t_service "$node")"
  [ "$svc" = frontend ] || ports=($(t_ports "$svc" "$(t_index "$node")"))
  TEMPORAL_PORT="$T_FRONTEND" TEMPORAL_FRONTEND_MEMBERSHIP_PORT="$T_FRONTEND_MEMBERSHIP" TEMPORAL_FRONTEND_HTTP_PORT="$T_FRONTEND_HTTP" \
    TEMPORAL_SERVICE_GRPC_PORT="${ports[0]:-}" TEMPORAL_SERVICE_MEMBERSHIP_PORT="${ports[1]:-}" \
    TEMPORAL_PG_HOSTS="$(pg_hosts)" TEMPORAL_HISTORY_SHARDS="$CLUSTER_SHARDS" \
    TEMPORAL_DYNAMIC_CONFIG="$TEMPORAL_SERVER_CONF/dynamicconfig.yaml" \
    nohup setsid "$TEMPORAL_SERVER_BIN" --root "$T_CONF" --config config --env cluster --allow-no-auth start --service "$svc" \
    >"$log" 2>&1 </dev/null &
  echo $! >"$PIDS/$node.pid"
}

# On fresh databases the first process writes the cluster metadata; several at once collide on its primary key and
# the losers exit (seen with both matching hosts): the others start once it is there.
t_metadata_written() { [ "$(pg_psql "$(pg_primary)" "select count(*) from cluster_metadata_info" temporal 2>/dev/null)" -ge 1 ] 2>/dev/null; }

# After the services started: the namespace and the search attributes (as temporal-server.sh does).
temporal_namespace() {
  local addr="127.0.0.1:$T_FRONTEND" log="$LOGS/temporal-frontend.log"
  "$TEMPORAL_BIN" operator namespace describe --address "$addr" --namespace default >/dev/null 2>&1 \
    || "$TEMPORAL_BIN" operator namespace create --address "$addr" --namespace default --retention 72h >>"$log" 2>&1 || true
  wait_for temporal-frontend "$log" 90 register_search_attributes "$addr"
}
