# Issue 34 (R22): the ports and node names of scripts/cluster.sh, all shifted by CLUSTER_OFFSET (default 0) so a
# second cluster (the reduced test, test/integration/cluster-drill.test.ts) can run beside the drill's. None of them
# is a port of the shared stack (5433, 7233, 8233, 9092/9093, 8180). Sourced by scripts/cluster.sh.
# shellcheck shell=bash
O="${CLUSTER_OFFSET:-0}"
PG_PORTS=([1]=$((15433 + O)) [2]=$((15434 + O)))
T_FRONTEND=$((17233 + O)) T_FRONTEND_MEMBERSHIP=$((17234 + O)) T_FRONTEND_HTTP=$((17235 + O))
T_UI=$((18233 + O))
# history1 17241/17242, history2 17243/17244, matching1 17251/17252, matching2 17253/17254, worker 17261/17262:
# gRPC, then membership (ringpop). Below 32768: Temporal stores membership ports as a PostgreSQL smallint.
t_ports() { # t_ports SERVICE INDEX → "grpc membership"
  local base
  case "$1" in history) base=17241 ;; matching) base=17251 ;; worker) base=17261 ;; esac
  echo "$((base + O + ($2 - 1) * 2)) $((base + O + ($2 - 1) * 2 + 1))"
}
KAFKA_NODES="${CLUSTER_KAFKA_BROKERS:-3}" # brokers (broker+controller); with 2, a third node is a controller only
kafka_port() { echo $((19091 + O + $1)); }
kafka_controller_port() { echo $((19191 + O + $1)); }
HISTORY_HOSTS="${CLUSTER_HISTORY_HOSTS:-2}"
MATCHING_HOSTS="${CLUSTER_MATCHING_HOSTS:-2}"
APP_REPLICAS="${CLUSTER_APP_REPLICAS:-2}"
# api1 13001 (metrics 13101), api2 13002 (13102); worker1 13011, worker2 13012; dispatcher1 13021, dispatcher2 13022.
app_port() { case "$1" in api) echo $((13000 + O + $2)) ;; worker) echo $((13010 + O + $2)) ;; dispatcher) echo $((13020 + O + $2)) ;; esac; }
api_metrics_port() { echo $((13100 + O + $1)); }

kafka_brokers() { local k out=(); for k in $(seq 1 "$KAFKA_NODES"); do out+=("127.0.0.1:$(kafka_port "$k")"); done; (IFS=,; echo "${out[*]}"); }
pg_hosts() { echo "127.0.0.1:${PG_PORTS[1]},127.0.0.1:${PG_PORTS[2]}"; }

# Every node, in start order.
all_nodes() {
  local i
  printf "%s\n" pg1 pg2
  for i in $(seq 1 3); do echo "kafka$i"; done
  echo temporal-frontend
  for i in $(seq 1 "$HISTORY_HOSTS"); do echo "temporal-history$i"; done
  for i in $(seq 1 "$MATCHING_HOSTS"); do echo "temporal-matching$i"; done
  printf "%s\n" temporal-worker temporal-ui
  for a in api worker dispatcher; do for i in $(seq 1 "$APP_REPLICAS"); do echo "$a$i"; done; done
}
