# M11: RabbitMQ, the broker a merchant's `rabbitmq` destination publishes to in tests and the demo, for scripts/stack.sh
# (sourced by it; uses its say/fail/wait_for/port_open/pid_alive/log_tail/kill_hard helpers). Debian's rabbitmq-server
# (pinned RABBITMQ_DEB_VERSION) is installed with apt once; the service apt would start is stopped and disabled, and
# the broker runs as a stack service of ours: node $RABBITMQ_NODENAME on 127.0.0.1:$RABBITMQ_PORT (5672), its
# distribution port $RABBITMQ_DIST_PORT, its mnesia, logs and Erlang cookie under .data/rabbitmq. Health: a TCP check
# of the AMQP port, then `rabbitmq-diagnostics -q ping`. A refused install does not break the rest of the stack:
# the broker tests skip (APIPAY_RABBITMQ=0 leaves it out on purpose).

RABBITMQ_DEB_VERSION="${RABBITMQ_DEB_VERSION:-3.10.8-1.1+deb12u1}"
RABBITMQ_PORT="${RABBITMQ_PORT:-5672}"
RABBITMQ_DIST_PORT="${RABBITMQ_DIST_PORT:-25672}"
RABBITMQ_NODENAME="${RABBITMQ_NODENAME:-apipay@localhost}"
RABBITMQ_ENABLED="${APIPAY_RABBITMQ:-1}"
RABBITMQ_LIB="/usr/lib/rabbitmq/bin"
RABBITMQ_HOME_DIR="$DATA/rabbitmq"
# The merchant-side user the tests and the demo publish as (a local broker's; not a secret of anyone's).
RABBITMQ_APP_USER="${RABBITMQ_APP_USER:-apipay-merchant}"
RABBITMQ_APP_PASSWORD="${RABBITMQ_APP_PASSWORD:-local-broker-pw-7c41d2}"

rabbitmq_vars() {
  RABBITMQ_VARS=(HOME="$RABBITMQ_HOME_DIR" RABBITMQ_NODENAME="$RABBITMQ_NODENAME" RABBITMQ_NODE_IP_ADDRESS=127.0.0.1
    RABBITMQ_NODE_PORT="$RABBITMQ_PORT" RABBITMQ_DIST_PORT="$RABBITMQ_DIST_PORT"
    RABBITMQ_MNESIA_BASE="$RABBITMQ_HOME_DIR/mnesia" RABBITMQ_LOG_BASE="$RABBITMQ_HOME_DIR/log"
    RABBITMQ_ENABLED_PLUGINS_FILE="$RABBITMQ_HOME_DIR/enabled_plugins" RABBITMQ_CONFIG_FILE="$RABBITMQ_HOME_DIR/rabbitmq"
    RABBITMQ_ADVANCED_CONFIG_FILE="$RABBITMQ_HOME_DIR/advanced.config"
    # Loopback only, like every stack service: Erlang distribution and epmd too (they bind every interface otherwise).
    RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS="-kernel inet_dist_use_interface {127,0,0,1}" ERL_EPMD_ADDRESS=127.0.0.1)
}
rabbitmq_env() { rabbitmq_vars; env "${RABBITMQ_VARS[@]}" "$@"; }

rabbitmq_healthy() {
  port_open "$RABBITMQ_PORT" && rabbitmq_env timeout 15 "$RABBITMQ_LIB/rabbitmq-diagnostics" -q -n "$RABBITMQ_NODENAME" ping >/dev/null 2>&1
}

install_rabbitmq() {
  [ -x "$RABBITMQ_LIB/rabbitmq-server" ] && return 0
  [ "$(id -u)" = 0 ] || { say "rabbitmq: not installed; install it with: sudo apt-get install -y rabbitmq-server=$RABBITMQ_DEB_VERSION"; return 1; }
  say "rabbitmq: installing rabbitmq-server $RABBITMQ_DEB_VERSION from Debian packages (once)"
  # policy-rc.d 101: apt must not start the distribution's own service (it would take port 5672 as another node).
  local policy=/usr/sbin/policy-rc.d created=0
  [ -e "$policy" ] || { printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && created=1; }
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "rabbitmq-server=$RABBITMQ_DEB_VERSION") >"$LOGS/install-rabbitmq.log" 2>&1
  local rc=$?
  [ "$created" = 1 ] && rm -f "$policy"
  if [ "$rc" != 0 ]; then log_tail "$LOGS/install-rabbitmq.log"; say "rabbitmq: apt-get install failed (log: $LOGS/install-rabbitmq.log); the broker tests will skip"; return 1; fi
  # Whatever the init system: the distribution's service stays stopped and disabled.
  command -v systemctl >/dev/null 2>&1 && { systemctl stop rabbitmq-server; systemctl disable rabbitmq-server; } >/dev/null 2>&1
  command -v update-rc.d >/dev/null 2>&1 && update-rc.d rabbitmq-server disable >/dev/null 2>&1
  return 0
}

start_rabbitmq() {
  [ "$RABBITMQ_ENABLED" = 0 ] && { say "rabbitmq: skipped (APIPAY_RABBITMQ=0)"; return 0; }
  install_rabbitmq || return 0
  local log="$LOGS/rabbitmq.log"
  if pid_alive rabbitmq && up_or_restart rabbitmq; then ensure_rabbitmq_user; say "rabbitmq: up (port $RABBITMQ_PORT, node $RABBITMQ_NODENAME)"; return 0; fi
  check_port_free rabbitmq "$RABBITMQ_PORT"
  mkdir -p "$RABBITMQ_HOME_DIR/mnesia" "$RABBITMQ_HOME_DIR/log"
  # No plugins (no management UI); the config only keeps the broker's default guest user on loopback.
  [ -f "$RABBITMQ_HOME_DIR/enabled_plugins" ] || echo '[].' >"$RABBITMQ_HOME_DIR/enabled_plugins"
  printf 'loopback_users.guest = true\nlisteners.tcp.default = 127.0.0.1:%s\n' "$RABBITMQ_PORT" >"$RABBITMQ_HOME_DIR/rabbitmq.conf"
  [ -f "$RABBITMQ_HOME_DIR/advanced.config" ] || echo '[].' >"$RABBITMQ_HOME_DIR/advanced.config"
  # setsid: its own session, like the other services (C10). nohup, setsid and env each exec the next, so $! is the
  # rabbitmq-server script itself, the leader of the process group its Erlang VM runs in (the soak's kill -9 of the
  # node kills that group; a shell function here would leave $! a subshell's pid).
  rabbitmq_vars
  nohup setsid env "${RABBITMQ_VARS[@]}" "$RABBITMQ_LIB/rabbitmq-server" >"$log" 2>&1 </dev/null &
  echo $! >"$PIDS/rabbitmq.pid"
  wait_for rabbitmq "$log" 90 rabbitmq_healthy
  ensure_rabbitmq_user
  say "rabbitmq: up (amqp://127.0.0.1:$RABBITMQ_PORT, node $RABBITMQ_NODENAME, user $RABBITMQ_APP_USER)"
}

# Idempotent: the user exists with its password and every permission on the default vhost.
ensure_rabbitmq_user() {
  local ctl=(rabbitmq_env timeout 30 "$RABBITMQ_LIB/rabbitmqctl" -q -n "$RABBITMQ_NODENAME")
  "${ctl[@]}" add_user "$RABBITMQ_APP_USER" "$RABBITMQ_APP_PASSWORD" >/dev/null 2>&1 || "${ctl[@]}" change_password "$RABBITMQ_APP_USER" "$RABBITMQ_APP_PASSWORD" >/dev/null 2>&1 || true
  "${ctl[@]}" set_permissions -p / "$RABBITMQ_APP_USER" '.*' '.*' '.*' >/dev/null 2>&1 || say "rabbitmq: could not grant $RABBITMQ_APP_USER its permissions"
}

stop_rabbitmq() {
  pid_alive rabbitmq || { rm -f "$PIDS/rabbitmq.pid"; return 0; }
  rabbitmq_env timeout 30 "$RABBITMQ_LIB/rabbitmqctl" -q -n "$RABBITMQ_NODENAME" stop >/dev/null 2>&1 || true
  stop_one rabbitmq
  # The Erlang port mapper the node started outlives it; it refuses to die while another node (the soak's) uses it.
  ERL_EPMD_ADDRESS=127.0.0.1 timeout 10 epmd -kill >/dev/null 2>&1 || true
}
