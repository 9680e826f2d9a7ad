# Issue 34 (R22): Kafka for scripts/cluster.sh: three KRaft nodes, each broker and controller (a static quorum of
# three voters), replication factor 3 and min.insync.replicas 2 for every topic (the outbound topic included), no
# unclean leader election. With CLUSTER_KAFKA_BROKERS=2 (the reduced test) nodes 1 and 2 are brokers and
# controllers, node 3 a controller only (a quorum of two voters would stop at the first kill), and topics get
# replication factor 2 and min.insync.replicas 1. Sourced by scripts/cluster.sh (stack.sh's helpers and caches).
# shellcheck shell=bash
KAFKA_RF=$(( KAFKA_NODES >= 3 ? 3 : KAFKA_NODES ))
KAFKA_MIN_ISR=$(( KAFKA_RF >= 3 ? 2 : 1 ))
kafka_is_broker() { [ "$1" -le "$KAFKA_NODES" ]; }

kafka_node_healthy() {
  local k="$1"
  if ! kafka_is_broker "$k"; then port_open "$(kafka_controller_port "$k")"; return; fi
  (cd "$ROOT" && KAFKA_BROKERS="127.0.0.1:$(kafka_port "$k")" KAFKA_HEALTH_TIMEOUT_MS=3000 timeout 8 node scripts/stack/kafka-health.mjs) >/dev/null 2>&1
}

kafka_write_config() {
  local k="$1" dir="$2" voters=() i roles=broker,controller listeners advertised
  for i in 1 2 3; do voters+=("$i@127.0.0.1:$(kafka_controller_port "$i")"); done
  listeners="PLAINTEXT://127.0.0.1:$(kafka_port "$k"),CONTROLLER://127.0.0.1:$(kafka_controller_port "$k")"
  advertised="advertised.listeners=PLAINTEXT://127.0.0.1:$(kafka_port "$k")"
  if ! kafka_is_broker "$k"; then roles=controller; listeners="CONTROLLER://127.0.0.1:$(kafka_controller_port "$k")"; advertised=""; fi
  cat >"$dir/server.properties" <<CONF
process.roles=$roles
node.id=$k
listeners=$listeners
$advertised
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
controller.quorum.voters=$(IFS=,; echo "${voters[*]}")
log.dirs=$dir/logs
num.partitions=$KAFKA_PARTITIONS
default.replication.factor=$KAFKA_RF
min.insync.replicas=$KAFKA_MIN_ISR
offsets.topic.replication.factor=$KAFKA_RF
transaction.state.log.replication.factor=$KAFKA_RF
transaction.state.log.min.isr=$KAFKA_MIN_ISR
share.coordinator.state.topic.replication.factor=$KAFKA_RF
share.coordinator.state.topic.min.isr=$KAFKA_MIN_ISR
unclean.leader.election.enable=false
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=false
# Under a load average of 50 (the shared box) a broker took longer than the default 60 s to register with the
# quorum and exited (the reduced test's second run): five minutes.
initial.broker.registration.timeout.ms=300000
CONF
  [ "$roles" = controller ] && sed -i '/^inter.broker.listener.name=/d' "$dir/server.properties"
  return 0
}

start_kafka_node() {
  local k="$1" node="kafka$1" dir="$CDATA/kafka$1" log="$LOGS/kafka$1.log"
  need java kafka "Kafka runs on the JVM; install a JDK (apt-get install -y default-jre-headless)"
  maven_libs kafka "$ROOT/scripts/java/kafka/pom.xml" "$KAFKA_LIB"
  if pid_alive "$node"; then
    healthy_within_node "$node" "$HEALTH_GRACE_S" && return 0
    say "$node: alive but unanswered for ${HEALTH_GRACE_S}s: restarting it"; kill_hard "$(cat "$PIDS/$node.pid")" || true
  fi
  mkdir -p "$dir/logs"
  kafka_write_config "$k" "$dir"
  local java_opts=(-Xms128m -Xmx384m -Dlog4j2.configurationFile="$ROOT/scripts/stack/kafka-log4j2.xml")
  [ -f "$CDATA/kafka.cluster-id" ] || java -cp "$KAFKA_LIB/*" kafka.tools.StorageTool random-uuid 2>/dev/null >"$CDATA/kafka.cluster-id"
  if [ ! -f "$dir/logs/meta.properties" ]; then
    java "${java_opts[@]}" -cp "$KAFKA_LIB/*" kafka.tools.StorageTool format -t "$(cat "$CDATA/kafka.cluster-id")" \
      -c "$dir/server.properties" >"$log" 2>&1 || { log_tail "$log"; fail "$node: storage format failed; log: $log"; }
  fi
  nohup setsid java "${java_opts[@]}" -cp "$KAFKA_LIB/*" kafka.Kafka "$dir/server.properties" >>"$log" 2>&1 </dev/null &
  echo $! >"$PIDS/$node.pid"
}

# Once every node was started (a quorum needs two voters before any broker answers).
wait_kafka() {
  local k
  for k in 1 2 3; do pid_alive "kafka$k" && wait_for "kafka$k" "$LOGS/kafka$k.log" 300 kafka_node_healthy "$k"; done
  [ -d "$ROOT/node_modules/kafkajs" ] || return 0
  # Idempotent; tried three times: on a loaded box the group coordinator of a fresh __consumer_offsets (replicated
  # now) took longer than the script's retries once (NOT_COORDINATOR_FOR_GROUP, the reduced test's first run).
  local try
  for try in 1 2 3; do
    (cd "$ROOT" && KAFKA_BROKERS="$(kafka_brokers)" KAFKA_REPLICATION_FACTOR="$KAFKA_RF" KAFKA_MIN_ISR="$KAFKA_MIN_ISR" \
      node scripts/stack/kafka-topic.mjs "$KAFKA_TOPIC" "$KAFKA_PARTITIONS") >>"$LOGS/kafka1.log" 2>&1 && return 0
    sleep 5
  done
  fail "kafka: could not create topic $KAFKA_TOPIC; log: $LOGS/kafka1.log"
}
