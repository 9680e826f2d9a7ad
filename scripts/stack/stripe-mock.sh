# I15: stripe-mock v0.203.0 (Stripe's own API mock, from the Go proxy) for scripts/stack.sh (sourced by it; uses its
# say/fail/wait_for/port_open/pid_alive/up_or_restart helpers): the Stripe API the `stripe_api` provider's payments
# query reaches through the stripe SDK in tests and the demo. Built once with `go install` at the pinned version into
# the cache; HTTP on 127.0.0.1:$STRIPE_MOCK_PORT (12111), HTTPS on $STRIPE_MOCK_HTTPS_PORT (12112). Not essential: when
# Go or the proxy is missing, one line says so and the Stripe tests are skipped (scripts/test.sh exports
# STRIPE_MOCK_URL only when it answers). APIPAY_STRIPE_MOCK=0 leaves it out. It keeps no state.

STRIPE_MOCK_VERSION="v0.203.0"
STRIPE_MOCK_PORT="${STRIPE_MOCK_PORT:-12111}"
STRIPE_MOCK_HTTPS_PORT="${STRIPE_MOCK_HTTPS_PORT:-12112}"
STRIPE_MOCK_BIN="$CACHE/bin/stripe-mock-$STRIPE_MOCK_VERSION"
STRIPE_MOCK_ENABLED="${APIPAY_STRIPE_MOCK:-1}"

# Healthy: it answers an authenticated API request (any test-mode key), not merely has its port open.
stripe_mock_healthy() {
  curl -fsS -m 5 -u sk_test_health: "http://127.0.0.1:$STRIPE_MOCK_PORT/v1/payment_intents/pi_health" >/dev/null 2>&1
}

# Returns 1 (after one line saying why) when it cannot be built; the caller goes on without it.
install_stripe_mock() {
  [ -x "$STRIPE_MOCK_BIN" ] && return 0
  local log="$LOGS/install-stripe-mock.log"
  if ! command -v go >/dev/null 2>&1; then
    say "stripe-mock: skipped, 'go' not found on PATH (it is built with go install); the Stripe tests are skipped"; return 1
  fi
  say "stripe-mock: building stripe-mock $STRIPE_MOCK_VERSION with go install (about a minute, once)"
  mkdir -p "$CACHE/bin" "$CACHE/gobin-stripe-mock"
  if ! GOBIN="$CACHE/gobin-stripe-mock" go install "github.com/stripe/stripe-mock@$STRIPE_MOCK_VERSION" >"$log" 2>&1; then
    say "stripe-mock: skipped, go install github.com/stripe/stripe-mock@$STRIPE_MOCK_VERSION failed (log: $log); the Stripe tests are skipped"; return 1
  fi
  mv "$CACHE/gobin-stripe-mock/stripe-mock" "$STRIPE_MOCK_BIN"
}

start_stripe_mock() {
  [ "$STRIPE_MOCK_ENABLED" = 0 ] && return 0
  install_stripe_mock || return 0
  local log="$LOGS/stripe-mock.log"
  if pid_alive stripe-mock && up_or_restart stripe-mock; then say "stripe-mock: up (http://127.0.0.1:$STRIPE_MOCK_PORT)"; return 0; fi
  check_port_free stripe-mock "$STRIPE_MOCK_PORT"; check_port_free stripe-mock "$STRIPE_MOCK_HTTPS_PORT"
  # setsid: its own session, like the other services (C10).
  nohup setsid "$STRIPE_MOCK_BIN" -http-addr "127.0.0.1:$STRIPE_MOCK_PORT" -https-addr "127.0.0.1:$STRIPE_MOCK_HTTPS_PORT" >"$log" 2>&1 </dev/null &
  echo $! >"$PIDS/stripe-mock.pid"
  wait_for stripe-mock "$log" 60 stripe_mock_healthy
  say "stripe-mock: up (http://127.0.0.1:$STRIPE_MOCK_PORT, stripe-mock $STRIPE_MOCK_VERSION)"
}
