#!/usr/bin/env bash
# The project's whole test suite: what the README calls "the tests" and what
# CI runs. Unit tests, golden files, the caddytest integration suite, the
# interop suite against the real a2a-go and @a2a-js/sdk clients, the
# benchmark harness's own tests, and a short run of every fuzz target. Needs Go and Node 20 (npm ci is run here).
set -euo pipefail
cd "$(dirname "$0")"

echo "== go vet"
go vet ./...

echo "== unit + integration tests (race detector on)"
go test -race -count=1 ./...

if [ -d interop ]; then
  echo "== interop (a2a-go v2 / v0.3, @a2a-js/sdk)"
  bash interop/run.sh
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
