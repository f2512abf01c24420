#!/usr/bin/env bash
# The project's whole test suite: what the README calls "the tests" and what
# CI runs. Unit tests, golden files, the caddytest integration suite, the
# interop suite against the real a2a-go and @a2a-js/sdk clients, and a short
# run of every fuzz target. Needs Go and Node 20 (npm ci is run here).
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

echo "== fuzz targets (short runs; long runs are done by hand)"
fuzztime="${FUZZTIME:-10s}"
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //'); do
    echo "-- $pkg $target"
    go test -run='^$' -fuzz="^${target}\$" -fuzztime="$fuzztime" "$pkg"
  done
done
echo "== all tests passed"
