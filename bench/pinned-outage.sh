#!/usr/bin/env bash
# P12 (issue 33), docs/benchmarks.md "Temporal on a core of its own": one bench:outage run with the Temporal dev server
# and the delivery worker on CPU 1, and PostgreSQL, Kafka, the dispatcher and the load generator on CPU 0 (taskset,
# every thread; PostgreSQL's backends inherit the postmaster's mask). A stand-in for production, where Temporal and
# the workers have machines of their own. Unpins on exit. Usage: bash bench/pinned-outage.sh [bench:outage args]
set -euo pipefail
cd "$(dirname "$0")/.."
pid() { cat ".data/pids/$1.pid"; }
pin() { for t in /proc/"$1"/task/*; do taskset -p -c "$2" "$(basename "$t")" >/dev/null 2>&1 || true; done; }
pin_tree() { pin "$1" "$2"; for c in $(ps -o pid= --ppid "$1"); do pin "$c" "$2"; done; }
unpin() { pin "$(pid temporal)" 0,1; pin_tree "$(pid postgresql)" 0,1; pin "$(pid kafka)" 0,1; }
trap unpin EXIT
pin "$(pid temporal)" 1
pin_tree "$(pid postgresql)" 0
pin "$(pid kafka)" 0
BENCH_WORKER_CPUS=1 taskset -c 0 npx tsx bench/outage.ts --runs 1 --timeline "$@"
