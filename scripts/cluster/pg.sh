# Issue 34 (R22): PostgreSQL for scripts/cluster.sh: pg1 and pg2, one primary and one synchronous streaming standby
# (synchronous_standby_names = 'ANY 1 (pg1, pg2)' on both, so whichever is primary waits for the other: a commit a
# client saw survives the primary's loss). `promote` makes the standby the primary and, until the old primary rejoins,
# drops the synchronous requirement (Patroni's non-strict synchronous mode: the new primary would block every write
# otherwise); `up` brings a dead node back as a standby of the current primary (a fresh pg_basebackup) and restores it.
# Clients use both hosts with target_session_attrs (primary for postgres.js: scripts/cluster/apps.sh; read-write
# for Temporal's pgx, which checks transaction_read_only). Sourced by scripts/cluster.sh (stack.sh's helpers).
# shellcheck shell=bash
SYNC_NAMES="ANY 1 (pg1, pg2)"
if [ "$(id -u)" = 0 ]; then
  PG_CLUSTER_DIR="${APIPAY_CLUSTER_PG_DATA:-/var/lib/apipay/cluster-$(printf %s "$CDATA" | sha1sum | cut -c1-10)}"
else
  PG_CLUSTER_DIR="${APIPAY_CLUSTER_PG_DATA:-$CDATA/pgdata}"
fi
pg_dir() { echo "$PG_CLUSTER_DIR/$1"; }
pg_port_of() { echo "${PG_PORTS[${1#pg}]}"; }
pg_other() { [ "$1" = pg1 ] && echo pg2 || echo pg1; }
pg_psql() { "$PG_BIN/psql" -h 127.0.0.1 -p "$(pg_port_of "$1")" -U postgres -d "${3:-postgres}" -qtAX -c "$2"; }
pg_node_pid() { local f; f="$(pg_dir "$1")/postmaster.pid"; [ -f "$f" ] && head -1 "$f"; }
pg_node_alive() { local pid; pid="$(pg_node_pid "$1")" && [ -n "$pid" ] && proc_alive "$pid"; }
pg_node_healthy() { "$PG_BIN/pg_isready" -q -t 3 -h 127.0.0.1 -p "$(pg_port_of "$1")" >/dev/null 2>&1; }
# The node named primary (the file is written at the first initdb and by promote).
pg_primary() { cat "$CDATA/pg.primary" 2>/dev/null || echo pg1; }
pg_role() { case "$(pg_psql "$1" 'select pg_is_in_recovery()' 2>/dev/null)" in f) echo primary ;; t) echo standby ;; *) echo down ;; esac; }

pg_start_node() {
  local node="$1" dir; dir="$(pg_dir "$node")"
  ln -sfn "$dir/server.log" "$LOGS/$node.log"
  "${PG_AS[@]}" "$PG_BIN/pg_ctl" -D "$dir" -l "$dir/server.log" -w -t 60 \
    -o "-h 127.0.0.1 -p $(pg_port_of "$node") -k $dir" start >/dev/null 2>&1 \
    || { log_tail "$dir/server.log"; fail "$node: pg_ctl start failed; log: $dir/server.log"; }
}

pg_init_primary() {
  local node="$1" dir; dir="$(pg_dir "$node")"
  say "$node: initdb (primary)"
  mkdir -p "$dir"; [ "$(id -u)" = 0 ] && chown -R postgres:postgres "$PG_CLUSTER_DIR" && chmod 700 "$dir"
  "${PG_AS[@]}" "$PG_BIN/initdb" -D "$dir" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 --data-checksums >"$CDATA/initdb.log" 2>&1 \
    || { log_tail "$CDATA/initdb.log"; fail "$node: initdb failed; log: $CDATA/initdb.log"; }
  # Copied to the standby by pg_basebackup: the same settings on both nodes.
  "${PG_AS[@]}" tee -a "$dir/postgresql.conf" >/dev/null <<CONF
# scripts/cluster.sh (issue 34)
max_connections = 400
wal_level = replica
max_wal_senders = 10
wal_keep_size = 512MB
hot_standby = on
fsync = on
synchronous_commit = on
wal_log_hints = on
CONF
  echo "$node" >"$CDATA/pg.primary"
  pg_start_node "$node"
  # synchronous_standby_names is set once the standby joined (pg_join_standby): until then a commit would wait.
  for db in apipay temporal temporal_visibility; do pg_psql "$node" "CREATE DATABASE $db" >/dev/null; done
  pg_psql "$node" "DO \$\$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$APP_ROLE') THEN CREATE ROLE $APP_ROLE LOGIN; END IF; END \$\$" >/dev/null
}

# pg_join_standby NODE: a fresh copy of the primary, streaming from it under its own application_name.
pg_join_standby() {
  local node="$1" primary dir; primary="$(pg_primary)"; dir="$(pg_dir "$node")"
  pg_node_healthy "$primary" || fail "$node: cannot join as a standby, the primary $primary does not answer"
  say "$node: pg_basebackup from $primary (standby)"
  rm -rf "$dir"; mkdir -p "$PG_CLUSTER_DIR"; [ "$(id -u)" = 0 ] && chown postgres:postgres "$PG_CLUSTER_DIR"
  "${PG_AS[@]}" "$PG_BIN/pg_basebackup" -h 127.0.0.1 -p "$(pg_port_of "$primary")" -U postgres -D "$dir" -X stream -c fast \
    >"$CDATA/basebackup.log" 2>&1 || { log_tail "$CDATA/basebackup.log"; fail "$node: pg_basebackup failed; log: $CDATA/basebackup.log"; }
  "${PG_AS[@]}" tee -a "$dir/postgresql.auto.conf" >/dev/null <<CONF
primary_conninfo = 'host=127.0.0.1 port=$(pg_port_of "$primary") user=postgres application_name=$node'
CONF
  "${PG_AS[@]}" touch "$dir/standby.signal"
  rm -f "$dir/postmaster.pid"
  pg_start_node "$node"
  # Back to synchronous: the primary waits for this standby again.
  pg_psql "$primary" "ALTER SYSTEM SET synchronous_standby_names = '$SYNC_NAMES'" && pg_psql "$primary" 'select pg_reload_conf()' >/dev/null
}

start_pg_node() {
  local node="$1" dir; dir="$(pg_dir "$node")"
  install_apt_postgres
  if pg_node_alive "$node"; then
    healthy_within_node "$node" "$HEALTH_GRACE_S" && return 0
    say "$node: postmaster alive but pg_isready unanswered for ${HEALTH_GRACE_S}s: restarting it"
    local pid; pid="$(pg_node_pid "$node")"; kill_hard "$pid" $(ps -o pid= --ppid "$pid" 2>/dev/null) || true
  fi
  if [ ! -f "$dir/PG_VERSION" ]; then
    if [ "$node" = "$(pg_primary)" ] && [ ! -f "$CDATA/pg.primary" ]; then pg_init_primary "$node"; else pg_join_standby "$node"; fi
  elif [ "$node" != "$(pg_primary)" ] && [ ! -f "$dir/standby.signal" ]; then
    # A former primary (killed, then its standby promoted) would fork the history: it rejoins from a fresh copy.
    say "$node: was primary before $(pg_primary) was promoted: rebuilding it as a standby"
    pg_join_standby "$node"
  else
    rm -f "$dir/postmaster.pid"
    pg_start_node "$node"
  fi
  say "$node: up ($(pg_role "$node"), port $(pg_port_of "$node"))"
}

# promote: the standby becomes the primary (the drill runs it once the primary is dead).
pg_promote() {
  local old new; old="$(pg_primary)"; new="$(pg_other "$old")"
  pg_node_alive "$old" && [ "$(pg_role "$old")" = primary ] && fail "promote: $old is alive and primary; kill it first (two primaries would fork the data)"
  pg_node_healthy "$new" || fail "promote: the standby $new does not answer"
  "${PG_AS[@]}" "$PG_BIN/pg_ctl" -D "$(pg_dir "$new")" -w -t 60 promote >/dev/null || fail "promote: pg_ctl promote $new failed"
  echo "$new" >"$CDATA/pg.primary"
  # Alone: no standby to wait for until the old primary rejoins (scripts/cluster.sh up).
  pg_psql "$new" "ALTER SYSTEM SET synchronous_standby_names = ''" && pg_psql "$new" 'select pg_reload_conf()' >/dev/null
  say "promote: $new is the primary (synchronous replication resumes when $old rejoins: scripts/cluster.sh up)"
}

pg_status_note() {
  local node="$1" role sync; role="$(pg_role "$node")"
  if [ "$role" = primary ]; then
    sync="$(pg_psql "$node" "select string_agg(application_name || ' ' || sync_state, ', ') from pg_stat_replication" 2>/dev/null)"
    echo "primary, standbys: ${sync:-none}"
  else echo "$role"; fi
}
