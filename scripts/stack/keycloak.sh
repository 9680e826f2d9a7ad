# A25: Keycloak, the stack's OpenID Connect provider, for scripts/stack.sh (sourced by it; uses its say/fail/wait_for/
# port_open/pid_alive/log_tail helpers). The pinned keycloak-quarkus-dist comes from Maven Central once (mvn
# dependency:copy) and is unpacked into the cache; it runs `start-dev` on 127.0.0.1:$KEYCLOAK_PORT (8180) with its
# H2 file database in .data/keycloak (kept across restarts), health on the management port. `up` starts it in the
# background first and waits for it (health, then the `apipay` realm seeded from scripts/stack/keycloak-realm.json
# by scripts/stack/keycloak-seed.mjs) after the other services, so its JVM start overlaps theirs.
# APIPAY_IDP=0: no Keycloak (the admin API then has no IdP unless the profile names another one).
# APIPAY_IDP=external: a second stack beside the first (other ports, its own APIPAY_DATA) uses the first stack's
# Keycloak on $KEYCLOAK_PORT: not started, seeded or stopped here; `up` only waits until its realm answers.

KEYCLOAK_VERSION="26.7.3"
KEYCLOAK_PORT="${KEYCLOAK_PORT:-8180}"
KEYCLOAK_MGMT_PORT="${KEYCLOAK_MGMT_PORT:-9180}"
KEYCLOAK_HOME="$CACHE/keycloak-$KEYCLOAK_VERSION"
KEYCLOAK_BOOT_S="${KEYCLOAK_BOOT_S:-420}" # a first start also builds (augments) the server
IDP_ENABLED="${APIPAY_IDP:-1}"

keycloak_healthy() { curl -fsS -m 5 "http://127.0.0.1:$KEYCLOAK_MGMT_PORT/health/ready" >/dev/null 2>&1; }

install_keycloak() {
  [ -x "$KEYCLOAK_HOME/bin/kc.sh" ] && return
  need mvn keycloak "keycloak-quarkus-dist comes from Maven Central"
  need java keycloak "Keycloak runs on the JVM (17 or newer)"
  local log="$LOGS/install-keycloak.log" dl="$CACHE/dl" tmp="$CACHE/keycloak-$KEYCLOAK_VERSION.tmp"
  say "keycloak: downloading org.keycloak:keycloak-quarkus-dist:$KEYCLOAK_VERSION from Maven Central (about 170 MB, once)"
  mkdir -p "$dl"
  mvn -q -B org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy \
    "-Dartifact=org.keycloak:keycloak-quarkus-dist:$KEYCLOAK_VERSION:tar.gz" "-DoutputDirectory=$dl" >"$log" 2>&1 \
    || { log_tail "$log"; fail "keycloak: Maven Central did not serve org.keycloak:keycloak-quarkus-dist:$KEYCLOAK_VERSION:tar.gz (log: $log); set APIPAY_IDP=0 to run without the IdP"; }
  rm -rf "$tmp" && mkdir -p "$tmp"
  tar -xzf "$dl/keycloak-quarkus-dist-$KEYCLOAK_VERSION.tar.gz" -C "$tmp" >>"$log" 2>&1 \
    || { log_tail "$log"; fail "keycloak: could not unpack the distribution; log: $log"; }
  rm -rf "$KEYCLOAK_HOME" && mv "$tmp/keycloak-$KEYCLOAK_VERSION" "$KEYCLOAK_HOME" && rm -rf "$tmp" "$dl/keycloak-quarkus-dist-$KEYCLOAK_VERSION.tar.gz"
}

# The local master-realm admin's password: generated once per checkout, never printed (the seed script reads it).
keycloak_admin_password() {
  local file="$DATA/keycloak/admin.pw"
  [ -f "$file" ] || { mkdir -p "$DATA/keycloak"; (umask 077; head -c 18 /dev/urandom | base64 | tr -d '/+=' >"$file"); }
  cat "$file"
}

# Starts Keycloak without waiting for it (wait_keycloak waits). A process still booting is left to boot.
start_keycloak_bg() {
  [ "$IDP_ENABLED" = 0 ] || [ "$IDP_ENABLED" = external ] && return
  install_keycloak
  local log="$LOGS/keycloak.log" pid age
  if pid_alive keycloak; then
    keycloak_healthy && return
    pid="$(cat "$PIDS/keycloak.pid")"; age="$(ps -o etimes= -p "$pid" 2>/dev/null | tr -d ' ')"
    [ "${age:-0}" -lt "$KEYCLOAK_BOOT_S" ] && return # still booting
    say "keycloak: pid $pid is alive but has not answered its health check: restarting it"
    kill_hard "$pid"; rm -f "$PIDS/keycloak.pid"
  fi
  check_port_free keycloak "$KEYCLOAK_PORT"; check_port_free keycloak "$KEYCLOAK_MGMT_PORT"
  mkdir -p "$DATA/keycloak/h2"
  # setsid: its own session, like the other services (C10). start-dev: HTTP, no hostname checks; the database is the
  # H2 file under .data (a development database: production runs Keycloak, or the customer's IdP, on its own).
  KC_BOOTSTRAP_ADMIN_USERNAME=admin KC_BOOTSTRAP_ADMIN_PASSWORD="$(keycloak_admin_password)" \
    JAVA_OPTS_KC_HEAP="-Xms128m -Xmx768m" \
    nohup setsid "$KEYCLOAK_HOME/bin/kc.sh" start-dev --http-host=127.0.0.1 --http-port="$KEYCLOAK_PORT" \
    --http-management-port="$KEYCLOAK_MGMT_PORT" --health-enabled=true --hostname="http://127.0.0.1:$KEYCLOAK_PORT" \
    --db=dev-file --db-url="jdbc:h2:file:$DATA/keycloak/h2/keycloakdb;NON_KEYWORDS=VALUE" \
    --log-level=warn >"$log" 2>&1 </dev/null &
  echo $! >"$PIDS/keycloak.pid"
}

# Waits for health, then seeds (or re-seeds, when the realm file changed) the apipay realm.
wait_keycloak() {
  [ "$IDP_ENABLED" = 0 ] && { say "keycloak: skipped (APIPAY_IDP=0)"; return; }
  local log="$LOGS/keycloak.log"
  if [ "$IDP_ENABLED" = external ]; then
    wait_for keycloak "$log" "$KEYCLOAK_BOOT_S" curl -fsS -m 5 "http://127.0.0.1:$KEYCLOAK_PORT/realms/apipay/.well-known/openid-configuration"
    say "keycloak: using the one already running (APIPAY_IDP=external, issuer http://127.0.0.1:$KEYCLOAK_PORT/realms/apipay)"; return
  fi
  wait_for keycloak "$log" "$KEYCLOAK_BOOT_S" keycloak_healthy
  [ -d "$ROOT/node_modules" ] || { say "keycloak: realm seeding skipped (run npm ci first)"; return; }
  KEYCLOAK_URL="http://127.0.0.1:$KEYCLOAK_PORT" KEYCLOAK_ADMIN_PASSWORD="$(keycloak_admin_password)" \
    KEYCLOAK_STAMP="$DATA/keycloak/realm.stamp" node "$ROOT/scripts/stack/keycloak-seed.mjs" "$ROOT/scripts/stack/keycloak-realm.json" >>"$log" 2>&1 \
    || { log_tail "$log"; fail "keycloak: could not seed the apipay realm; log: $log"; }
  say "keycloak: up (issuer http://127.0.0.1:$KEYCLOAK_PORT/realms/apipay, admin console http://127.0.0.1:$KEYCLOAK_PORT/admin)"
}
