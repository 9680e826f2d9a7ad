# Shared by scripts/start.sh and scripts/test.sh: node dependencies and the local development environment.
# shellcheck shell=bash
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DATA="${APIPAY_DATA:-$ROOT/.data}"
mkdir -p "$DATA/logs" "$DATA/pids"

# npm ci when node_modules is missing or was installed from another package-lock.json or other patches/ (R17:
# patch-package applies them in npm ci's postinstall, so a changed patch needs a fresh install too).
ensure_node_deps() {
  local stamp="$ROOT/node_modules/.apipay-lock-hash" want
  want="$(cat "$ROOT/package-lock.json" "$ROOT"/patches/*.patch 2>/dev/null | sha1sum | cut -c1-40)"
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    echo "[deps] npm ci (package-lock.json changed or node_modules missing)"
    (cd "$ROOT" && npm ci --no-audit --no-fund --loglevel=error) || { echo "[deps] FAILED npm ci" >&2; exit 1; }
    echo "$want" >"$stamp"
  fi
}

# O17: the PyPI `standardwebhooks` verifier the tests POST to (test/integration/standard-webhooks.test.ts), in a venv
# cached under ~/.cache/apipay, pinned; STANDARDWEBHOOKS_PYTHON names its python for the tests.
STANDARDWEBHOOKS_PY_VERSION=1.1.0
ensure_python_verifiers() {
  local venv="${APIPAY_CACHE:-$HOME/.cache/apipay}/py/standardwebhooks-$STANDARDWEBHOOKS_PY_VERSION"
  if ! "$venv/bin/python" -c 'import standardwebhooks' >/dev/null 2>&1; then
    echo "[deps] python venv with standardwebhooks==$STANDARDWEBHOOKS_PY_VERSION (the Standard Webhooks verifier tests)"
    rm -rf "$venv"
    { python3 -m venv "$venv" && "$venv/bin/pip" install --quiet --disable-pip-version-check "standardwebhooks==$STANDARDWEBHOOKS_PY_VERSION"; } \
      || { echo "[deps] FAILED to install standardwebhooks from PyPI; test/integration/standard-webhooks.test.ts will fail" >&2; rm -rf "$venv"; return 1; }
  fi
  export STANDARDWEBHOOKS_PYTHON="$venv/bin/python"
}

# Local secrets: generated once per checkout into .data/dev.env (git-ignored), never printed.
load_dev_env() {
  local file="$DATA/dev.env"
  if [ ! -f "$file" ]; then
    umask 077
    {
      echo "ADMIN_TOKEN=dev_$(head -c 24 /dev/urandom | base64 | tr -d '/+=')"
      echo "SECRETS_ENCRYPTION_KEY=$(head -c 32 /dev/urandom | base64)"
      echo "SANDBOX_STRIPE_WEBHOOK_SECRET=whsec_$(head -c 24 /dev/urandom | base64 | tr -d '/+=')"
      echo "SANDBOX_HMAC_WEBHOOK_SECRET=$(head -c 24 /dev/urandom | base64 | tr -d '/+=')"
    } >"$file"
  fi
  set -a
  # shellcheck disable=SC1090
  . "$file"
  set +a
  export TEMPORAL_TEST_SERVER="${TEMPORAL_TEST_SERVER:-${APIPAY_CACHE:-$HOME/.cache/apipay}/bin/temporal-test-server}"
}

# C3: the browser tests drive Debian's chromium through playwright-core (which never downloads a browser).
# Installed with apt-get when missing and we may (root); otherwise one line says what to do.
ensure_chromium() {
  local path="${CHROMIUM_PATH:-/usr/bin/chromium}"
  [ -x "$path" ] && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "[deps] apt-get install chromium (the browser tests of test/browser need it)"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null; } \
      || { echo "[deps] FAILED apt-get install chromium; install it yourself or set CHROMIUM_PATH" >&2; return 1; }
    [ -x "$path" ] || { echo "[deps] chromium installed but not at $path; set CHROMIUM_PATH" >&2; return 1; }
  else
    echo "[deps] chromium is missing at $path and this user cannot apt-get (not root): run 'sudo apt-get install chromium' or set CHROMIUM_PATH; the browser tests (test/browser) fail without it" >&2
    return 1
  fi
}

# Issue 22: helm for the chart checks of npm test (helm lint, helm template: test/unit/helm-chart.test.ts), built
# once with go install at a pinned version into the cache, like the Temporal CLI. Prints nothing when present.
HELM_VERSION="v3.22.0"
HELM_BIN="${APIPAY_CACHE:-$HOME/.cache/apipay}/bin/helm-$HELM_VERSION"
ensure_helm() {
  [ -x "$HELM_BIN" ] && return 0
  local cache="${APIPAY_CACHE:-$HOME/.cache/apipay}" log="$DATA/logs/install-helm.log"
  command -v go >/dev/null 2>&1 || { echo "[deps] helm: 'go' not found on PATH (helm $HELM_VERSION is built with go install)" >&2; return 1; }
  echo "[deps] helm: building helm $HELM_VERSION with go install (a few minutes, once)"
  mkdir -p "$cache/bin" "$cache/gobin-helm"
  GOBIN="$cache/gobin-helm" go install "helm.sh/helm/v3/cmd/helm@$HELM_VERSION" >"$log" 2>&1 \
    || { tail -n 20 "$log" >&2; echo "[deps] FAILED go install helm; log: $log" >&2; return 1; }
  mv "$cache/gobin-helm/helm" "$HELM_BIN"
}

# R18: Jaeger (all-in-one, in-memory) for `npm start`'s traces and APIPAY_JAEGER=1 stacks, pinned and cached like
# helm. `go install github.com/jaegertracing/jaeger/cmd/jaeger@v1.76.0` refuses this module (its go.mod has a
# replace directive), so the same pinned module is fetched through the Go module proxy (checked against go.sum)
# and built as the main module. Prints nothing when present.
JAEGER_VERSION="v1.76.0"
JAEGER_BIN="${APIPAY_CACHE:-$HOME/.cache/apipay}/bin/jaeger-$JAEGER_VERSION"
ensure_jaeger() {
  [ -x "$JAEGER_BIN" ] && return 0
  local cache="${APIPAY_CACHE:-$HOME/.cache/apipay}" log="$DATA/logs/install-jaeger.log" dir src
  command -v go >/dev/null 2>&1 || { echo "[deps] jaeger: 'go' not found on PATH (jaeger $JAEGER_VERSION is built with go)" >&2; return 1; }
  echo "[deps] jaeger: building jaeger $JAEGER_VERSION with go (several minutes, once)"
  mkdir -p "$cache/bin" "$cache/src"
  src="$cache/src/jaeger-$JAEGER_VERSION"
  {
    dir="$(cd /tmp && go mod download -json "github.com/jaegertracing/jaeger@$JAEGER_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')" \
      && [ -n "$dir" ] && rm -rf "$src" && cp -r "$dir" "$src" && chmod -R u+w "$src" \
      && (cd "$src" && CGO_ENABLED=0 go build -o "$JAEGER_BIN.tmp" ./cmd/jaeger) \
      && mv "$JAEGER_BIN.tmp" "$JAEGER_BIN" && rm -rf "$src"
  } >"$log" 2>&1 || { tail -n 20 "$log" >&2; echo "[deps] FAILED to build jaeger; log: $log" >&2; rm -f "$JAEGER_BIN.tmp"; return 1; }
}
