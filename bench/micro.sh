#!/usr/bin/env bash
# The Go micro-benchmarks of the hot path, benchstat-friendly:
#   bash bench/micro.sh                 one run of each
#   COUNT=6 bash bench/micro.sh         six, for benchstat old.txt new.txt
# Output goes to stdout and bench/out/micro-<time>.txt. Keep COUNT small on
# a shared machine: every benchmark runs about a second per count.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
mkdir -p "$here/out"
out=$here/out/micro-$(date -u +%Y%m%dT%H%M%SZ).txt
cd "$root"
go test -run='^$' -bench=. -benchmem -count="${COUNT:-1}" -benchtime="${BENCHTIME:-1s}" \
	./protocol/ ./handler/ ./binding/... ./store/... ./upstream/... | tee "$out"
echo "== $out" >&2
