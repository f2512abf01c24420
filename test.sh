#!/usr/bin/env bash
# The project's whole test suite: what the README calls "the tests" and what
# CI runs. Unit tests, golden files, the caddytest integration suite, the
# interop suite against the real a2a-go and @a2a-js/sdk clients, the
# browser suite in headless Chromium, the benchmark harness's own tests, and
# a short run of every fuzz target. Needs Go and Node 20 (npm ci is run here),
# and Chromium, Python 3 and curl (the README's snippets, run by the examples
# package against its Python agent), redis-server and PostgreSQL (the
# Redis and PostgreSQL stores' tests start their own servers; nothing is
# started here): installed here when missing (as root, with apt-get), else
# the run stops at once naming the Debian packages.
set -euo pipefail
cd "$(dirname "$0")"

# Programs the tests need that a fresh machine may lack, as "command:Debian
# package". Missing ones are installed in one go (one apt-get update) when we
# can; otherwise we stop now, naming the packages, rather than fail later or
# skip anything. CHROMIUM=<path> points the browser tests at another build.
need=()
for pair in chromium:chromium python3:python3 curl:curl redis-server:redis-server; do
  cmd=${pair%%:*} pkg=${pair#*:}
  if [ "$cmd" = chromium ] && { [ -n "${CHROMIUM:-}" ] || command -v chromium-browser >/dev/null; }; then
    continue
  fi
  command -v "$cmd" >/dev/null || need+=("$pkg")
done
# Debian keeps postgres off the PATH, in /usr/lib/postgresql/<version>/bin
# (where internal/pgtest looks first).
if ! compgen -G '/usr/lib/postgresql/*/bin/postgres' >/dev/null && ! command -v postgres >/dev/null; then
  need+=(postgresql)
fi
if [ "${#need[@]}" -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "== installing ${need[*]} (apt-get)"
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}"
  else
    echo "test.sh: the tests need the Debian package(s) ${need[*]}: install them (apt-get install ${need[*]}) and run again" >&2
    exit 1
  fi
fi

# The first run fetches the Go modules of this module and of the nested
# ones (interop, browser, bench) and the npm packages: it needs the network
# (the Go module proxy, the npm registry) and says so rather than going
# quiet while it downloads.
echo "== go modules (downloaded once: this needs the network the first time)"
# What the packages and their tests import, not the whole module graph.
for mod in . interop browser bench; do
  if [ -f "$mod/go.mod" ]; then (cd "$mod" && go list -deps -test ./... >/dev/null); fi
done

echo "== go vet"
go vet ./...

echo "== unit + integration tests, the README's snippets (race detector on)"
go test -race -count=1 ./...

if [ -d interop ]; then
  echo "== interop (a2a-go v2 / v0.3, @a2a-js/sdk)"
  bash interop/run.sh
fi

if [ -d browser ]; then
  echo "== browser (headless Chromium: cross-site forgery, CORS, the card, the inspector page)"
  (cd browser && go vet ./... && go test -race -count=1 ./...)
fi

if [ -d bench ]; then
  # The harness's own checks (answer validation, idle-stream accounting,
  # the floor handler): its numbers are only as good as they are.
  echo "== bench harness (go vet, tests; the benchmark itself: bash bench/run.sh)"
  (cd bench && go vet ./... && go test -race -count=1 ./...)
fi

echo "== fuzz targets (short runs; long runs are done by hand)"
# A count, not a duration: on a loaded 2-core machine Go's fuzz coordinator
# can hit its own deadline at the end of a timed run and report "context
# deadline exceeded" with no failing input. A real finding writes its input
# under testdata/fuzz and fails; only the bare deadline report is retried.
fuzzexecs="${FUZZEXECS:-30000x}"
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //'); do
    echo "-- $pkg $target"
    for try in 1 2; do
      if out=$(go test -run='^$' -fuzz="^${target}\$" -fuzztime="$fuzzexecs" -parallel=1 "$pkg" 2>&1); then
        echo "$out" | tail -n 1
        break
      fi
      echo "$out"
      if [ "$try" = 2 ] || echo "$out" | grep -q 'Failing input written' || ! echo "$out" | grep -q 'context deadline exceeded'; then
        exit 1
      fi
      echo "-- $target: the fuzz engine's own deadline, no failing input; once more"
    done
  done
done
echo "== all tests passed"
