#!/usr/bin/env bash
# bench/build.sh: what building Caddy with the module costs, against stock
# Caddy built from the same module versions.
#
#   bash bench/build.sh                 # one cold build of each, stock then ours
#   RUNS=2 bash bench/build.sh          # two of each, interleaved
#   TARGETS=ours bash bench/build.sh    # ours only (or stock)
#   P=1 bash bench/build.sh             # go build -p 1: one compile at a time
#   COMPILES=1 bash bench/build.sh      # also each compile's max RSS (top 15)
#   SIZES=1 bash bench/build.sh         # also the binary's symbols by module (top 25)
#   KEEP=/tmp/out bash bench/build.sh   # keep the binaries (and COMPILES' logs) there
#
# "stock" is a main that imports caddy's cmd, modules/standard and
# github.com/mholt/caddy-ratelimit (which cmd/caddy also imports), in a
# temporary module whose go.mod and go.sum are this repository's, so every
# version is the one cmd/caddy builds with; "ours" is ./cmd/caddy. The
# difference is the a2a module alone.
#
# Each build is cold: an empty GOCACHE of its own. The module cache is
# filled first (go mod download), so no build downloads. Peak memory is the
# summed RSS of the build's whole process tree (go, every compile and the
# link running at once), sampled every 100 ms; "largest" is the biggest
# single process (GNU time's maximum resident set size). Summed RSS counts
# the pages concurrent compilers share once per process, so it errs high.
#
# Needs bash, go, procps (ps), awk and GNU time (apt-get install time).
set -Eeuo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUNS=${RUNS:-1}
TARGETS=${TARGETS:-"stock ours"}
P=${P:-}
COMPILES=${COMPILES:-}
SIZES=${SIZES:-}
KEEP=${KEEP:-}

if [ ! -x /usr/bin/time ]; then
	echo "bench/build.sh: needs GNU time at /usr/bin/time (apt-get install time)" >&2
	exit 1
fi

trap 'echo "bench/build.sh: line $LINENO failed" >&2' ERR
WORK=$(mktemp -d /tmp/a2a-build.XXXXXX)
trap 'chmod -R u+w "$WORK" 2>/dev/null; rm -rf "$WORK"' EXIT

# The stock main, in a module with this repository's requirements.
mkdir -p "$WORK/stock"
sed 's|^module .*|module buildbench/stock|' "$ROOT/go.mod" >"$WORK/stock/go.mod"
cp "$ROOT/go.sum" "$WORK/stock/go.sum"
cat >"$WORK/stock/main.go" <<'EOF'
// Stock Caddy with the rate limiter cmd/caddy also builds in.
package main

import (
	caddycmd "github.com/caddyserver/caddy/v2/cmd"

	_ "github.com/caddyserver/caddy/v2/modules/standard"
	_ "github.com/mholt/caddy-ratelimit"
)

func main() {
	caddycmd.Main()
}
EOF

(cd "$ROOT" && go mod download)
(cd "$WORK/stock" && go mod download)

# sumrss PID: the summed RSS (KiB) of PID and all its descendants.
# A process may end while ps reads it: a failed sample counts as 0.
sumrss() {
	{ ps -e -o pid=,ppid=,rss= 2>/dev/null || true; } | awk -v root="$1" '
		{ parent[$1] = $2; rss[$1] = $3 }
		END {
			for (p in rss) {
				q = p
				for (i = 0; i < 64 && q != root && q > 1; i++) q = parent[q]
				if (q == root) sum += rss[p]
			}
			print sum + 0
		}'
}

# build NAME DIR PKG: one cold build; prints one result line.
build() {
	local name=$1 dir=$2 pkg=$3
	local cache out timef log peak=0 now pid
	cache=$(mktemp -d "$WORK/cache.XXXXXX")
	out="$WORK/$name.bin"
	timef="$WORK/$name.time"
	log="$WORK/$name.compiles"
	rm -f "$out" "$log"
	local flags=()
	[ -n "$P" ] && flags+=(-p "$P")
	[ -n "$COMPILES" ] && flags+=(-toolexec "/usr/bin/time -a -o $log -f %M\t%e\t%C")
	(cd "$dir" && GOCACHE=$cache GOFLAGS=-buildvcs=false /usr/bin/time -v -o "$timef" \
		go build "${flags[@]}" -o "$out" "$pkg") &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		now=$(sumrss "$pid" || echo 0)
		[ "$now" -gt "$peak" ] && peak=$now
		sleep 0.1
	done
	wait "$pid"
	local user sys wall largest size stripped
	user=$(awk -F': ' '/User time/ {print $2}' "$timef")
	sys=$(awk -F': ' '/System time/ {print $2}' "$timef")
	wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$timef" | awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; print s }')
	largest=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$timef")
	size=$(stat -c %s "$out")
	(cd "$dir" && GOCACHE=$cache GOFLAGS=-buildvcs=false go build -ldflags='-s -w' -o "$out.stripped" "$pkg")
	stripped=$(stat -c %s "$out.stripped")
	awk -v n="$name" -v peak="$peak" -v big="$largest" -v cpu="$user + $sys" -v wall="$wall" -v size="$size" -v strip="$stripped" \
		'BEGIN { split(cpu, c, " + "); printf "%-6s %9.0f %9.0f %8.0f %7.0f %9.1f %9.1f\n", n, peak / 1024, big / 1024, c[1] + c[2], wall, size / 1048576, strip / 1048576 }'
	if [ -n "$COMPILES" ]; then
		echo "  largest compiles of $name (max RSS MiB, seconds, package):"
		# -toolexec runs every tool; a compile's line names its -p package.
		grep -E '/compile ' "$log" | awk -F'\t' '{
			pkg = "?"; n = split($3, a, " ")
			for (i = 1; i < n; i++) if (a[i] == "-p") { pkg = a[i+1]; break }
			printf "%7.0f %7.1f  %s\n", $1 / 1024, $2, pkg }' | sort -rn | head -15 || true
	fi
	if [ -n "$SIZES" ]; then
		# Code and read-only data (nm types T and R): data symbols may
		# stand for memory the file does not hold (crypto's 32 MiB DRBG
		# buffer); the line tables and type metadata are not per symbol,
		# so the sums add up to well under the file's size.
		echo "  $name's code and read-only data by module (MiB, go tool nm -size):"
		go tool nm -size "$out" | awk '$3 !~ /^[TtRr]$/ { next } {
			sym = $4; for (i = 5; i <= NF; i++) sym = sym " " $i
			sub(/^type:\.?(eq\.)?/, "", sym); sub(/^go:(itab\.)?\*?/, "", sym)
			cut = index(sym, "("); if (cut > 1) sym = substr(sym, 1, cut - 1)
			n = split(sym, part, "/")
			last = part[n]; dot = index(last, "."); if (dot > 0) last = substr(last, 1, dot - 1)
			if (n == 1) mod = "std:" last
			else if (part[1] ~ /^(github\.com|golang\.org|cloud\.google\.com|gitlab\.com)$/ && n >= 3) mod = part[1] "/" part[2] "/" (n == 3 ? last : part[3])
			else if (part[1] ~ /\./) mod = part[1] "/" (n == 2 ? last : part[2])
			else mod = "std:" part[1]
			size[mod] += $2
		} END { for (m in size) printf "%8.2f  %s\n", size[m] / 1048576, m }' | sort -rn | head -25 || true
	fi
	if [ -n "$KEEP" ]; then
		mkdir -p "$KEEP"
		cp "$out" "$KEEP/$name.bin"
		if [ -n "$COMPILES" ]; then cp "$log" "$KEEP/$name.compiles"; fi
	fi
	chmod -R u+w "$cache" && rm -rf "$cache"
}

echo "$(go version), $(nproc) CPUs, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)${P:+, go build -p $P}"
echo "target  peak MiB  largest   CPU s  wall s    bin MB  strip MB"
for _ in $(seq "$RUNS"); do
	for t in $TARGETS; do
		case $t in
		stock) build stock "$WORK/stock" . ;;
		ours) build ours "$ROOT" ./cmd/caddy ;;
		*) echo "unknown target $t" >&2; exit 2 ;;
		esac
	done
done
