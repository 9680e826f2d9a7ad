#!/usr/bin/env bash
# Stops the application processes started by scripts/start.sh (by their pid files); the stack keeps running.
set -u
DATA="${APIPAY_DATA:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/.data}"
for f in "$DATA"/pids/app-*.pid; do
  [ -f "$f" ] || continue
  pid="$(cat "$f")"
  name="$(basename "$f" .pid)"
  if kill -0 "$pid" 2>/dev/null; then
    # Each was started by setsid: its pid is its process group; SIGTERM lets it shut down gracefully.
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null
    for _ in $(seq 1 75); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL -- "-$pid" 2>/dev/null
    echo "[stop] ${name#app-} stopped"
  fi
  rm -f "$f"
done
# R22: a cluster the drill (or its reduced test, offset 500) left running, e.g. after an interrupted run, is taken down
# too, so nothing outlives `npm run stop` (CI's last step).
for offset in 0 500; do
  dir="$DATA/cluster$([ "$offset" = 0 ] || echo "-$offset")"
  [ -d "$dir" ] && CLUSTER_OFFSET="$offset" bash "$(dirname "${BASH_SOURCE[0]}")/cluster.sh" down >/dev/null 2>&1 && echo "[stop] cluster (offset $offset) down"
done
exit 0
