#!/usr/bin/env bash
# The caddy-a2a benchmark in one command (method and results: BENCHMARKS.md).
#
#   bash bench/run.sh              full run, about 20 minutes
#   QUICK=1 bash bench/run.sh      smoke check, about 3 minutes
#   PROFILE=1 bash bench/run.sh    also CPU and allocation profiles of the
#                                  module under load (bench/out/*.pprof)
#   ONLY="load stream" bash bench/run.sh   only some steps, of: load grpc
#                                  push stream openai gateway redis durable idle rss profile
#                                  (profile needs PROFILE=1)
#
# It builds Caddy with the module (./cmd/caddy), the tiny upstream agent, the
# canned A2A 1.0 agent (the gateway step), starts redis-server (the redis
# step: REDIS_SERVER or redis-server on the PATH), PostgreSQL (the durable
# step: Debian's postgresql, initdb'd in the work dir, run as the postgres
# user when the bench runs as root), the a2a-go v2.4.0 echo server, a stock Caddy with an empty holding handler (the
# floor of the idle streams) and the load generator (Go module bench/), installs
# the @a2a-js/sdk 1.3.0 + express 5 echo server (npm ci, bench/js), starts every
# server on 127.0.0.1, measures, prints markdown tables, and stops everything it
# started, by PID, on exit. The report is also written to bench/out/.
#
# Environment: BENCH_PORT (first of 56 ports, default 9400), BENCH_CONNS
# (connections of the closed loop, default 32), IDLE_PROTO (protocols of the
# idle-streams step, default h1,h2c), KEEP=1 (keep the work dir with the
# Caddyfiles and logs).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
port=${BENCH_PORT:-9400}
conns=${BENCH_CONNS:-32}
work=$(mktemp -d /tmp/caddy-a2a-bench.XXXXXX)
bin=$work/bin
mkdir -p "$bin" "$here/out"
stamp=$(date -u +%Y%m%dT%H%M%SZ)
report=$here/out/report-$stamp.md

if [ -n "${QUICK:-}" ]; then
	rounds=1 dur=3s warmup=1s
	relay_d=3s events_d=2s
	idle_levels=200,1000 settle=1s
	sends_a2a=25000 sends_sdk=3000
	sends_redis=20000
	push_tasks=200
else
	rounds=3 dur=10s warmup=2s
	relay_d=12s events_d=5s
	idle_levels=1000,10000 settle=3s
	# 1M sends (issue 5): ~3 min at the ~6,000 sends/s the module does
	# here, 100× the store bound. The SDK peers are 3-6× slower here, so
	# they get fewer sends.
	sends_a2a=1000000 sends_sdk=20000
	# store redis with ttl 5s: 1M sends (the issue's bound), two to three
	# minutes at the ~7,000/s it does here, many times the ttl and several
	# of the module's 30 s sweeps.
	sends_redis=1000000
	# push: the issue's 1,000 tasks with a config each.
	push_tasks=1000
fi

# Ports.
p_up=$port              # the upstream agent
p_ceiling=$((port + 1)) # Caddy reverse_proxy → upstream
p_v10=$((port + 2))     # Caddy + a2a (the 1.0 target)
p_v03=$((port + 3))     # Caddy + a2a (the 0.3 target)
p_go=$((port + 4))      # a2a-go echo server
p_js=$((port + 5))      # a2a-js echo server
p_relay=$((port + 6))   # Caddy + a2a over a paced NDJSON upstream
p_burst=$((port + 7))   # Caddy + a2a over a burst NDJSON upstream (same process as relay)
p_idle=$((port + 8))    # idle streams: Caddy + a2a over an auth-required upstream, the floor Caddy, Caddy reverse_proxy → p_hold (one at a time)
p_rss=$((port + 9))     # Caddy + a2a, default store bound (RSS across many sends)
p_go2=$((port + 10))    # fresh a2a-go for the RSS run
p_js2=$((port + 11))    # fresh a2a-js for the RSS run
p_prof=$((port + 12))   # Caddy + a2a for profiling, admin on p_prof+1, reverse_proxy on p_prof+2
p_idle_admin=$((port + 16)) # admin API of the idle-streams Caddy (forced GC, memstats)
p_sproxy=$((port + 17)) # Caddy reverse_proxy → upstream, streaming (same process as relay)
p_hold=$((port + 18))   # upstream of the idle reverse_proxy (its own, so the shared one never holds 10k streams)
p_agent=$((port + 19))  # the canned A2A 1.0 agent (gateway step)
p_gwproxy=$((port + 20)) # Caddy reverse_proxy → agent
p_gw=$((port + 21))     # Caddy + a2a, upstream a2a → agent /echo (its card streams)
p_gwb=$((port + 22))    # Caddy + a2a, upstream a2a → agent /echo-blocking (its card does not stream)
p_gwrelay=$((port + 23)) # Caddy + a2a, upstream a2a → agent /chunks/500/2ms; reverse_proxy → agent on p_gwrelay+1 (same process)
p_redis=$((port + 25))  # redis-server of the redis step (sends, chunk latency, replicas)
p_rproxy=$((port + 26)) # Caddy reverse_proxy → upstream (redis step)
p_rmem=$((port + 27))   # Caddy + a2a, store memory (redis step)
p_rredis=$((port + 28)) # Caddy + a2a, store redis
p_rrelay=$((port + 29)) # Caddy + a2a over the paced NDJSON upstream, store memory; store redis on p_rrelay+1 (same process)
p_repa=$((port + 31))   # replica A: Caddy + a2a over the paced NDJSON upstream, store redis
p_repb=$((port + 32))   # replica B: the same, another process
p_rrss=$((port + 33))   # Caddy + a2a, store redis with ttl 5s (RSS and Redis memory across many sends)
p_redis2=$((port + 34)) # a fresh redis-server for the RSS run
p_pinup=$((port + 35))  # the upstream of the pinned redis run (core 0)
p_pinrp=$((port + 36))  # Caddy reverse_proxy → p_pinup (core 0)
p_pina2a=$((port + 37)) # Caddy + a2a, store redis → p_pinredis (core 0)
p_pinredis=$((port + 38)) # redis-server on a core of its own (core 1)
p_grpcup=$((port + 39))   # the tiny gRPC agent (bench/cmd/grpcup), h2c
p_grpcrp=$((port + 40))   # Caddy reverse_proxy h2c → grpcup (the gRPC ceiling)
p_grpca2a=$((port + 41))  # Caddy + a2a, grpc on (h2c), over the upstream agent
p_push=$((port + 42))     # Caddy + a2a with push (receiver in the generator), over the upstream agent
p_pushadm=$((port + 43))  # its admin endpoint (the goroutine count)
p_oai=$((port + 44))      # Caddy + a2a, upstream openai → the upstream's paced chat completions stream
p_rredisux=$((port + 45)) # Caddy + a2a, store redis over the Unix socket of p_redis's server
p_rrelayux=$((port + 46)) # Caddy + a2a over the paced NDJSON upstream, store redis over that socket (the rrelay process)
p_pg=$((port + 47))       # PostgreSQL of the durable step
p_dfile=$((port + 48))    # Caddy + a2a, store file (durable step)
p_dpg=$((port + 49))      # Caddy + a2a, store postgres
p_drelay=$((port + 50))   # Caddy + a2a over the paced NDJSON upstream, store memory; store postgres on +1, store file on +2 (same process)
p_dpga=$((port + 53))     # replica A: Caddy + a2a over the paced NDJSON upstream, store postgres
p_dpgb=$((port + 54))     # replica B
p_dfrss=$((port + 55))    # Caddy + a2a, store file with ttl 5s (RSS across many sends)

# A server left running on one of the ports (by an earlier run killed
# hard, or anything else) would answer in place of the one a step starts,
# which then exits at once and the step measures the stranger: refuse to
# start instead.
for ((p = port; p < port + 56; p++)); do
	if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
		echo "port $p (of $port-$((port + 55))) is in use; stop what holds it or move the range with BENCH_PORT" >&2
		rm -rf "$work"
		exit 1
	fi
done

pids=()
cleanup() {
	local rc=$?
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	for p in "${pids[@]}"; do
		wait "$p" 2>/dev/null || true
	done
	if [ -n "${KEEP:-}" ]; then
		echo "work dir kept: $work" >&2
	else
		rm -rf "$work"
	fi
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log() { echo "== $*" >&2; }

# measure LOADGEN-ARGS... runs the generator, appends its tables to the
# report and remembers a failure (a target that answered wrong) without
# stopping the other measurements.
failed=0
measure() {
	if ! "$bin/loadgen" "$@" | tee -a "$report"; then
		failed=1
	fi
}

# stop PID...: the servers of a finished step (cleanup catches the rest).
stop() {
	kill "$@" 2>/dev/null || true
}

# start NAME CMD... runs CMD in the background with its output in the work
# dir and records its PID (in the variable pid_NAME, too).
start() {
	local name=$1
	shift
	"$@" >"$work/$name.log" 2>&1 &
	pids+=($!)
	printf -v "pid_$name" '%s' $!
}

# wait_port PORT NAME: until something accepts on 127.0.0.1:PORT.
wait_port() {
	local deadline=$((SECONDS + 30))
	until (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; do
		if [ $SECONDS -ge $deadline ]; then
			echo "$2 did not start on port $1; its log:" >&2
			cat "$work/$2.log" >&2
			exit 1
		fi
		sleep 0.1
	done
}

# caddyfile NAME PORT UPSTREAM-PATH [EXTRA-A2A-LINES [GLOBAL-LINES]] writes
# the Caddyfile of one a2a site.
caddyfile() {
	cat >"$work/$1.caddyfile" <<EOF
{
	${5:-admin off}
	auto_https off
	persist_config off
}

http://:$2 {
	bind 127.0.0.1
	a2a {
		upstream http://127.0.0.1:$p_up$3
		name "Bench"
		description "caddy-a2a benchmark target"
		version 1.0.0
		skill echo {
			name Echo
			description Echo
			tags echo
		}
		${4:-}
	}
}
EOF
}

# step NAME: whether to run that step (all of them unless ONLY lists some).
step() { [ -z "${ONLY:-}" ] || [[ " $ONLY " == *" $1 "* ]]; }

log "build: Caddy with the a2a module (./cmd/caddy)"
(cd "$root" && go build -o "$bin/caddy" ./cmd/caddy)
log "build: upstream, A2A agent, a2a-go echo server, floor Caddy, load generator (bench/)"
(cd "$here" && go build -o "$bin/" ./cmd/...)
# Only the load and rss steps run the JS peer.
if step load || step rss; then
	log "npm ci (bench/js: @a2a-js/sdk 1.3.0, express 5)"
	(cd "$here/js" && npm ci --no-audit --no-fund --loglevel=error >&2)
fi

cat >"$work/ceiling.caddyfile" <<EOF
{
	admin off
	auto_https off
	persist_config off
}

http://:$p_ceiling {
	bind 127.0.0.1
	reverse_proxy 127.0.0.1:$p_up
}
EOF
# The 1.0 target serves HTTP+JSON too: the REST target is the same process
# and mount, so the two bindings are compared on one service.
caddyfile v10 "$p_v10" /echo "rest_path /a2a/rest"
caddyfile v03 "$p_v03" /echo
caddyfile rss "$p_rss" /echo
# h2c besides HTTP/1.1: the idle step measures streams over both.
caddyfile idle "$p_idle" /auth "store memory {
			max_tasks 20000
		}" "admin 127.0.0.1:$p_idle_admin
	servers {
		protocols h1 h2c
	}"
# The floor of the idle streams: a stock Caddy whose handler (bench_hold,
# bench/cmd/holdcaddy) does the least that holds a stream open (one SSE
# comment, flushed, then nothing), on the same port and admin API, with the
# same protocols. What a stream costs it, any Caddy handler pays; the
# module's own cost is its streams' minus these.
cat >"$work/idle-floor.caddyfile" <<EOF
{
	admin 127.0.0.1:$p_idle_admin
	auto_https off
	persist_config off
	servers {
		protocols h1 h2c
	}
}

http://:$p_idle {
	bind 127.0.0.1
	bench_hold
}
EOF
# A reference, not a floor: Caddy's own reverse_proxy holding the same
# streams open in front of the upstream's /hold, flushing at once as an SSE
# proxy must; it keeps a copy buffer and a goroutine more per stream.
# To the upstream it speaks h2c: 10,000 streams on ~40 connections, where
# HTTP/1.1 would take a socket per stream on top of the client's, more than
# the 20,000 descriptors a process may have here (and more per stream).
cat >"$work/idle-proxy.caddyfile" <<EOF
{
	admin 127.0.0.1:$p_idle_admin
	auto_https off
	persist_config off
	servers {
		protocols h1 h2c
	}
}

http://:$p_idle {
	bind 127.0.0.1
	reverse_proxy 127.0.0.1:$p_hold {
		flush_interval -1
		transport http {
			versions h2c
		}
	}
}
EOF
# One process, three sites: the paced stream (latency) and the burst
# (events/s) through the module, and the same NDJSON through reverse_proxy
# (what any extra hop through Caddy costs a stream).
caddyfile stream "$p_relay" /ndjson/500/2ms
cat >>"$work/stream.caddyfile" <<EOF

http://:$p_sproxy {
	bind 127.0.0.1
	reverse_proxy 127.0.0.1:$p_up {
		flush_interval -1
	}
}

http://:$p_burst {
	bind 127.0.0.1
	a2a {
		upstream http://127.0.0.1:$p_up/ndjson/5000/0s
		name "Bench"
		description "caddy-a2a benchmark target"
		skill echo {
			name Echo
			description Echo
			tags echo
		}
	}
}
EOF

# The gateway: the module's a2a upstream in front of an A2A agent, beside
# Caddy's reverse_proxy in front of the same agent, each its own process.
# No card fields: the module takes them from the agent's card.
gateway_site() {
	cat <<EOF

http://:$1 {
	bind 127.0.0.1
	a2a {
		upstream a2a http://127.0.0.1:$p_agent$2
	}
}
EOF
}
gateway_head='{
	admin off
	auto_https off
	persist_config off
}'
{
	echo "$gateway_head"
	gateway_site "$p_gw" /echo
} >"$work/gw.caddyfile"
{
	echo "$gateway_head"
	gateway_site "$p_gwb" /echo-blocking
} >"$work/gwb.caddyfile"
cat >"$work/gwproxy.caddyfile" <<EOF
$gateway_head

http://:$p_gwproxy {
	bind 127.0.0.1
	reverse_proxy 127.0.0.1:$p_agent
}
EOF
# One process, two sites: the paced chunk stream through the module and
# through reverse_proxy (flushing at once, as an SSE proxy must).
{
	echo "$gateway_head"
	gateway_site "$p_gwrelay" /chunks/500/2ms
	cat <<EOF

http://:$((p_gwrelay + 1)) {
	bind 127.0.0.1
	reverse_proxy 127.0.0.1:$p_agent {
		flush_interval -1
	}
}
EOF
} >"$work/gwrelay.caddyfile"

# The redis step: the same site with store memory (the default) and with
# store redis, each its own process, beside reverse_proxy (the ceiling's
# Caddyfile on another port); then the paced NDJSON stream through both
# stores (one process); then two replicas on one Redis; then store redis
# with a short ttl for the memory run. Each has a key prefix of its own.
redis_store() {
	cat <<EOF
store redis redis://127.0.0.1:$1 {
			key_prefix $2:
			${3:-}
		}
EOF
}
sed "s/:$p_ceiling/:$p_rproxy/" "$work/ceiling.caddyfile" >"$work/rproxy.caddyfile"
sed "s/:$p_ceiling/:$p_pinrp/; s/127.0.0.1:$p_up/127.0.0.1:$p_pinup/" "$work/ceiling.caddyfile" >"$work/pinrp.caddyfile"
caddyfile rmem "$p_rmem" /echo
caddyfile rredis "$p_rredis" /echo "$(redis_store "$p_redis" load)"
# The same over the server's Unix socket (redis_sock), a prefix of its own.
redis_sock=$work/redis.sock
redis_store_unix() {
	redis_store "$1" "$2" | sed "s#redis://127.0.0.1:$1#unix://$redis_sock#"
}
caddyfile rredisux "$p_rredisux" /echo "$(redis_store_unix "$p_redis" loadux)"
caddyfile pina2a "$p_pina2a" /echo "$(redis_store "$p_pinredis" pin)"
sed -i "s/127.0.0.1:$p_up/127.0.0.1:$p_pinup/" "$work/pina2a.caddyfile"
caddyfile rrelay "$p_rrelay" /ndjson/500/2ms
caddyfile rrelay2 $((p_rrelay + 1)) /ndjson/500/2ms "$(redis_store "$p_redis" relay)"
sed -n '/^http/,$p' "$work/rrelay2.caddyfile" >>"$work/rrelay.caddyfile"
caddyfile rrelayux "$p_rrelayux" /ndjson/500/2ms "$(redis_store_unix "$p_redis" relayux)"
sed -n '/^http/,$p' "$work/rrelayux.caddyfile" >>"$work/rrelay.caddyfile"
caddyfile repa "$p_repa" /ndjson/500/2ms "$(redis_store "$p_redis" rep)"
caddyfile repb "$p_repb" /ndjson/500/2ms "$(redis_store "$p_redis" rep)"
# ttl 5s bounds the finished tasks; max_tasks_per_owner (every send here
# has the one anonymous owner) is raised past what 5 s of sends make, so
# that the ttl is the bound, not the owner's cap of 1000.
caddyfile rrss "$p_rrss" /echo "$(redis_store "$p_redis2" rss "ttl 5s")
		limits {
			max_tasks_per_owner 1000000
		}"

# The durable step: store file and store postgres beside store memory and
# reverse_proxy (blocking sends), the paced NDJSON stream through memory,
# postgres and file (one process), two replicas on one PostgreSQL, and
# store file with a short ttl across many sends (RSS flat). Each has a
# schema or directory of its own.
pg_dsn="postgres://bench@127.0.0.1:$p_pg/bench?sslmode=disable"
pg_store() {
	cat <<EOF
store postgres $pg_dsn {
			schema $1
			${2:-}
		}
EOF
}
file_store() {
	cat <<EOF
store file $work/files/$1 {
			${2:-}
		}
EOF
}
caddyfile dfile "$p_dfile" /echo "$(file_store load)"
caddyfile dpg "$p_dpg" /echo "$(pg_store load)"
caddyfile drelay "$p_drelay" /ndjson/500/2ms
caddyfile drelay2 $((p_drelay + 1)) /ndjson/500/2ms "$(pg_store relay)"
sed -n '/^http/,$p' "$work/drelay2.caddyfile" >>"$work/drelay.caddyfile"
caddyfile drelay3 $((p_drelay + 2)) /ndjson/500/2ms "$(file_store relay)"
sed -n '/^http/,$p' "$work/drelay3.caddyfile" >>"$work/drelay.caddyfile"
caddyfile dpga "$p_dpga" /ndjson/500/2ms "$(pg_store rep)"
caddyfile dpgb "$p_dpgb" /ndjson/500/2ms "$(pg_store rep)"
caddyfile dfrss "$p_dfrss" /echo "$(file_store rss "ttl 5s")
		limits {
			max_tasks_per_owner 1000000
		}"

# start_postgres: a PostgreSQL of the bench's own in $work/pg on p_pg
# (fsync and synchronous commit on, as a durable setup runs it), with a
# database bench; as root, run as the postgres user (it refuses root).
start_postgres() {
	local bindir as=()
	bindir=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
	if [ -z "$bindir" ]; then
		log "durable: PostgreSQL not found (Debian package postgresql)"
		return 1
	fi
	mkdir -p "$work/pg"
	if [ "$(id -u)" = 0 ]; then
		chown postgres "$work/pg"
		chmod o+x "$work"
		as=(runuser -u postgres --)
	fi
	"${as[@]}" "$bindir/initdb" -D "$work/pg/data" -U bench --auth trust >/dev/null
	start pg "${as[@]}" "$bindir/postgres" -D "$work/pg/data" -p "$p_pg" -k "$work/pg" -c listen_addresses=127.0.0.1 -c max_connections=200
	wait_port "$p_pg" pg
	# It listens before it takes connections (recovery, start-up).
	until "$bindir/pg_isready" -q -h 127.0.0.1 -p "$p_pg"; do
		sleep 0.1
	done
	"$bindir/psql" -h 127.0.0.1 -p "$p_pg" -U bench -d postgres -qc "CREATE DATABASE bench" >/dev/null
}

export GOMAXPROCS=${GOMAXPROCS:-$(nproc)}
start up "$bin/upstream" -addr "127.0.0.1:$p_up"
wait_port "$p_up" up

{
	echo "# caddy-a2a benchmark, $(date -u '+%Y-%m-%d %H:%M UTC')${QUICK:+ (QUICK smoke run: numbers are not meaningful)}"
	echo
	echo "- commit: $(cd "$root" && git rev-parse --short HEAD 2>/dev/null || echo unknown)$(cd "$root" && git diff --quiet HEAD -- . 2>/dev/null || echo ' (with uncommitted changes)')"
	echo "- machine: $(nproc) × $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(awk '/MemTotal/ {printf "%.0f GB", $2/1048576}' /proc/meminfo) RAM, Linux $(uname -r); load average before the run: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "- $(go version | cut -d' ' -f3-4), node $(node --version), Caddy $("$bin/caddy" version | cut -d' ' -f1); every server and the generator share the machine"
	echo "- generator: bench/cmd/loadgen, $conns keep-alive HTTP/1.1 connections per target, closed loop; every answer is checked"
} | tee "$report"

if step load; then
	log "load: interleaved rounds"
	start ceiling "$bin/caddy" run --adapter caddyfile --config "$work/ceiling.caddyfile"
	start v10 "$bin/caddy" run --adapter caddyfile --config "$work/v10.caddyfile"
	start v03 "$bin/caddy" run --adapter caddyfile --config "$work/v03.caddyfile"
	start a2ago "$bin/a2ago" -addr "127.0.0.1:$p_go"
	start a2ajs node "$here/js/server.mjs" "127.0.0.1:$p_js"
	for pn in "$p_ceiling ceiling" "$p_v10 v10" "$p_v03 v03" "$p_go a2ago" "$p_js a2ajs"; do
		wait_port $pn
	done
	measure load -c "$conns" -d "$dur" -warmup "$warmup" -rounds "$rounds" \
		-t "name=ceiling (reverse_proxy),kind=ceiling,url=http://127.0.0.1:$p_ceiling/echo,pid=$pid_ceiling,up=$pid_up" \
		-t "name=caddy-a2a v1.0 SendMessage,kind=v1.0,url=http://127.0.0.1:$p_v10/a2a,pid=$pid_v10,up=$pid_up" \
		-t "name=caddy-a2a v1.0 HTTP+JSON message:send,kind=rest,url=http://127.0.0.1:$p_v10/a2a/rest,pid=$pid_v10,up=$pid_up" \
		-t "name=caddy-a2a v0.3 message/send,kind=v0.3,url=http://127.0.0.1:$p_v03/a2a,pid=$pid_v03,up=$pid_up" \
		-t "name=a2a-go v2.4.0,kind=v1.0,url=http://127.0.0.1:$p_go/a2a,pid=$pid_a2ago" \
		-t "name=a2a-js 1.3.0 (express 5),kind=v1.0,url=http://127.0.0.1:$p_js/a2a,pid=$pid_a2ajs" \
		-ceiling "ceiling (reverse_proxy)"
	stop "$pid_ceiling" "$pid_v10" "$pid_v03" "$pid_a2ago" "$pid_a2ajs"
fi

if step stream; then
	log "streaming: chunk relay latency and events/s"
	start stream "$bin/caddy" run --adapter caddyfile --config "$work/stream.caddyfile"
	wait_port "$p_relay" stream
	wait_port "$p_burst" stream
	wait_port "$p_sproxy" stream
	measure relay -direct "http://127.0.0.1:$p_up/ndjson/500/2ms" -a2a "http://127.0.0.1:$p_relay/a2a" \
		-proxy "http://127.0.0.1:$p_sproxy/ndjson/500/2ms" \
		-chunks 500 -d "$relay_d"
	measure events -direct "http://127.0.0.1:$p_up/ndjson/5000/0s" -a2a "http://127.0.0.1:$p_burst/a2a" \
		-proxy "http://127.0.0.1:$p_sproxy/ndjson/5000/0s" \
		-chunks 5000 -d "$events_d"
	stop "$pid_stream"
fi

# The grpc step: A2A 1.0's gRPC SendMessage through the module (grpc on,
# over the same HTTP upstream as every other target) beside Caddy's own
# reverse_proxy of gRPC (h2c) to a tiny gRPC agent answering the same task,
# and, in the same process as the module's gRPC, its JSON-RPC and HTTP+JSON.
h2c_globals='	servers {
		protocols h1 h2 h2c
	}'
cat >"$work/grpcrp.caddyfile" <<EOF
{
	admin off
	auto_https off
	persist_config off
$h2c_globals
}

http://:$p_grpcrp {
	bind 127.0.0.1
	reverse_proxy h2c://127.0.0.1:$p_grpcup
}
EOF
caddyfile grpca2a "$p_grpca2a" /echo "grpc on
		rest_path /a2a/rest" "admin off
$h2c_globals"
# push: the receiver (in the generator) is on 127.0.0.1, which only allow
# reaches; admin on, for the goroutine count.
caddyfile push "$p_push" /echo "push {
			allow 127.0.0.1
		}" "admin 127.0.0.1:$p_pushadm"

# The openai step: 200 tokens, 2 ms apart, from an OpenAI-compatible chat
# completions stream (the upstream's /openai route), read by the client
# directly and through the module's openai upstream: what the module adds
# to each token.
if step openai; then
	log "openai: token relay latency, the model server read directly and through upstream openai"
	cat >"$work/openai.caddyfile" <<EOF
{
	admin off
	auto_https off
	persist_config off
}

http://:$p_oai {
	bind 127.0.0.1
	a2a {
		upstream openai http://127.0.0.1:$p_up/openai/200/2ms/v1 {
			model bench
		}
		name "Bench"
		description "caddy-a2a benchmark target"
		version 1.0.0
		skill chat {
			name Chat
			description Chat
			tags chat
		}
	}
}
EOF
	start openai "$bin/caddy" run --adapter caddyfile --config "$work/openai.caddyfile"
	wait_port "$p_oai" openai
	measure relay -chat -direct "http://127.0.0.1:$p_up/openai/200/2ms/v1/chat/completions" -a2a "http://127.0.0.1:$p_oai/a2a" \
		-chunks 200 -d "$relay_d"
	stop "$pid_openai"
fi

if step grpc; then
	log "grpc: SendMessage over gRPC (h2c) beside reverse_proxy of gRPC"
	start grpcup "$bin/grpcup" -addr "127.0.0.1:$p_grpcup"
	start grpcrp "$bin/caddy" run --adapter caddyfile --config "$work/grpcrp.caddyfile"
	start grpca2a "$bin/caddy" run --adapter caddyfile --config "$work/grpca2a.caddyfile"
	for pn in "$p_grpcup grpcup" "$p_grpcrp grpcrp" "$p_grpca2a grpca2a"; do
		wait_port $pn
	done
	measure load -title "Blocking SendMessage over gRPC (h2c)" -c "$conns" -d "$dur" -warmup "$warmup" -rounds "$rounds" \
		-t "name=reverse_proxy (gRPC h2c) → gRPC agent,kind=grpc,url=http://127.0.0.1:$p_grpcrp,pid=$pid_grpcrp,up=$pid_grpcup" \
		-t "name=caddy-a2a gRPC SendMessage,kind=grpc,url=http://127.0.0.1:$p_grpca2a,pid=$pid_grpca2a,up=$pid_up" \
		-t "name=caddy-a2a JSON-RPC SendMessage (same process),kind=v1.0,url=http://127.0.0.1:$p_grpca2a/a2a,pid=$pid_grpca2a,up=$pid_up" \
		-t "name=caddy-a2a HTTP+JSON message:send (same process),kind=rest,url=http://127.0.0.1:$p_grpca2a/a2a/rest,pid=$pid_grpca2a,up=$pid_up" \
		-ceiling "reverse_proxy (gRPC h2c) → gRPC agent"
	stop "$pid_grpcup" "$pid_grpcrp" "$pid_grpca2a"
fi

if step push; then
	log "push: 1,000 sends with a push config each, to a receiver in the generator; then to one that is down"
	start push "$bin/caddy" run --adapter caddyfile --config "$work/push.caddyfile"
	wait_port "$p_push" push
	measure push -url "http://127.0.0.1:$p_push/a2a" -admin "127.0.0.1:$p_pushadm" -pid "$pid_push" -tasks "$push_tasks"
	stop "$pid_push"
fi

if step gateway; then
	log "gateway: upstream a2a and reverse_proxy in front of one A2A agent, blocking sends then chunk latency"
	start agent "$bin/a2aagent" -addr "127.0.0.1:$p_agent"
	wait_port "$p_agent" agent
	start gwproxy "$bin/caddy" run --adapter caddyfile --config "$work/gwproxy.caddyfile"
	start gw "$bin/caddy" run --adapter caddyfile --config "$work/gw.caddyfile"
	start gwb "$bin/caddy" run --adapter caddyfile --config "$work/gwb.caddyfile"
	for pn in "$p_gwproxy gwproxy" "$p_gw gw" "$p_gwb gwb"; do
		wait_port $pn
	done
	measure load -title "Gateway: blocking SendMessage (1.0) to one A2A agent" -c "$conns" -d "$dur" -warmup "$warmup" -rounds "$rounds" \
		-t "name=reverse_proxy → agent,kind=v1.0,url=http://127.0.0.1:$p_gwproxy/echo/rpc,pid=$pid_gwproxy,up=$pid_agent" \
		-t "name=caddy-a2a upstream a2a (agent streams),kind=v1.0,url=http://127.0.0.1:$p_gw/a2a,pid=$pid_gw,up=$pid_agent" \
		-t "name=caddy-a2a upstream a2a (blocking agent),kind=v1.0,url=http://127.0.0.1:$p_gwb/a2a,pid=$pid_gwb,up=$pid_agent" \
		-ceiling "reverse_proxy → agent"
	stop "$pid_gwproxy" "$pid_gw" "$pid_gwb"
	start gwrelay "$bin/caddy" run --adapter caddyfile --config "$work/gwrelay.caddyfile"
	wait_port "$p_gwrelay" gwrelay
	wait_port $((p_gwrelay + 1)) gwrelay
	measure gwrelay -direct "http://127.0.0.1:$p_agent/chunks/500/2ms/rpc" -gateway "http://127.0.0.1:$p_gwrelay/a2a" \
		-proxy "http://127.0.0.1:$((p_gwrelay + 1))/chunks/500/2ms/rpc" -chunks 500 -d "$relay_d"
	stop "$pid_gwrelay" "$pid_agent"
fi

if step redis; then
	log "redis: store redis beside store memory and reverse_proxy, chunk latency, two replicas, memory with a short ttl"
	redis_server=${REDIS_SERVER:-redis-server}
	start redis "$redis_server" --port "$p_redis" --bind 127.0.0.1 --unixsocket "$redis_sock" --unixsocketperm 700 --save "" --appendonly no
	wait_port "$p_redis" redis
	start rproxy "$bin/caddy" run --adapter caddyfile --config "$work/rproxy.caddyfile"
	start rmem "$bin/caddy" run --adapter caddyfile --config "$work/rmem.caddyfile"
	start rredis "$bin/caddy" run --adapter caddyfile --config "$work/rredis.caddyfile"
	start rredisux "$bin/caddy" run --adapter caddyfile --config "$work/rredisux.caddyfile"
	for pn in "$p_rproxy rproxy" "$p_rmem rmem" "$p_rredis rredis" "$p_rredisux rredisux"; do
		wait_port $pn
	done
	# The store redis targets' second CPU figure is Redis's, not the
	# upstream's (the same for all of them): over TCP and over the Unix
	# socket, as a Caddy on Redis's own machine would reach it.
	measure load -title "Store redis: blocking SendMessage (1.0), Redis on the same machine" -c "$conns" -d "$dur" -warmup "$warmup" -rounds "$rounds" \
		-t "name=reverse_proxy → upstream,kind=ceiling,url=http://127.0.0.1:$p_rproxy/echo,pid=$pid_rproxy,up=$pid_up" \
		-t "name=caddy-a2a store memory,kind=v1.0,url=http://127.0.0.1:$p_rmem/a2a,pid=$pid_rmem,up=$pid_up" \
		-t "name=caddy-a2a store redis over TCP (+ Redis CPU),kind=v1.0,url=http://127.0.0.1:$p_rredis/a2a,pid=$pid_rredis,up=$pid_redis" \
		-t "name=caddy-a2a store redis over a Unix socket (+ Redis CPU),kind=v1.0,url=http://127.0.0.1:$p_rredisux/a2a,pid=$pid_rredisux,up=$pid_redis" \
		-ceiling "reverse_proxy → upstream"
	stop "$pid_rproxy" "$pid_rmem" "$pid_rredis" "$pid_rredisux"
	# The same sends with Redis on a core of its own (taskset): Caddy, the
	# upstream and the generator on the other, one core for both targets,
	# so that Redis's CPU does not come off theirs, as with Redis on a
	# machine of its own.
	if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null; then
		start pinredis taskset -c 1 "$redis_server" --port "$p_pinredis" --bind 127.0.0.1 --save "" --appendonly no
		start pinup taskset -c 0 "$bin/upstream" -addr "127.0.0.1:$p_pinup"
		wait_port "$p_pinredis" pinredis
		wait_port "$p_pinup" pinup
		start pinrp env GOMAXPROCS=1 taskset -c 0 "$bin/caddy" run --adapter caddyfile --config "$work/pinrp.caddyfile"
		start pina2a env GOMAXPROCS=1 taskset -c 0 "$bin/caddy" run --adapter caddyfile --config "$work/pina2a.caddyfile"
		wait_port "$p_pinrp" pinrp
		wait_port "$p_pina2a" pina2a
		if ! GOMAXPROCS=1 taskset -c 0 "$bin/loadgen" load -title "Store redis, Redis on a core of its own (everything else on the other)" \
			-c "$conns" -d "$dur" -warmup "$warmup" -rounds "$rounds" \
			-t "name=reverse_proxy → upstream,kind=ceiling,url=http://127.0.0.1:$p_pinrp/echo,pid=$pid_pinrp,up=$pid_pinup" \
			-t "name=caddy-a2a store redis (+ Redis CPU),kind=v1.0,url=http://127.0.0.1:$p_pina2a/a2a,pid=$pid_pina2a,up=$pid_pinredis" \
			-ceiling "reverse_proxy → upstream" | tee -a "$report"; then
			failed=1
		fi
		stop "$pid_pinrp" "$pid_pina2a" "$pid_pinup" "$pid_pinredis"
	else
		log "redis: the run with Redis on a core of its own needs 2 CPUs and taskset: skipped"
	fi
	start rrelay "$bin/caddy" run --adapter caddyfile --config "$work/rrelay.caddyfile"
	wait_port "$p_rrelay" rrelay
	wait_port $((p_rrelay + 1)) rrelay
	wait_port "$p_rrelayux" rrelay
	# Chunk latency twice: through the Redis as the load rounds left it
	# (their tasks kept for the default ttl 1h), then emptied. A Redis
	# holding much else gave chunks a longer tail on this bench's machines
	# while its own command times stayed the same (BENCHMARKS.md); the
	# titles say what it held.
	for held in loaded emptied; do
		if [ "$held" = emptied ]; then
			"$bin/loadgen" redisflush -addr "127.0.0.1:$p_redis" || failed=1
		fi
		measure storerelay -direct "http://127.0.0.1:$p_up/ndjson/500/2ms" -memory "http://127.0.0.1:$p_rrelay/a2a" \
			-redis "http://127.0.0.1:$((p_rrelay + 1))/a2a" -how TCP -redis-addr "127.0.0.1:$p_redis" -chunks 500 -d "$relay_d"
		measure storerelay -direct "http://127.0.0.1:$p_up/ndjson/500/2ms" -memory "http://127.0.0.1:$p_rrelay/a2a" \
			-redis "http://127.0.0.1:$p_rrelayux/a2a" -how "Unix socket" -redis-addr "127.0.0.1:$p_redis" -chunks 500 -d "$relay_d"
	done
	stop "$pid_rrelay"
	start repa "$bin/caddy" run --adapter caddyfile --config "$work/repa.caddyfile"
	start repb "$bin/caddy" run --adapter caddyfile --config "$work/repb.caddyfile"
	wait_port "$p_repa" repa
	wait_port "$p_repb" repb
	measure replicas -direct "http://127.0.0.1:$p_up/ndjson/500/2ms" -a "http://127.0.0.1:$p_repa/a2a" \
		-b "http://127.0.0.1:$p_repb/a2a" -redis-addr "127.0.0.1:$p_redis" -chunks 500 -d "$relay_d"
	stop "$pid_repa" "$pid_repb"
	start redis2 "$redis_server" --port "$p_redis2" --bind 127.0.0.1 --save "" --appendonly no
	wait_port "$p_redis2" redis2
	start rrss "$bin/caddy" run --adapter caddyfile --config "$work/rrss.caddyfile"
	wait_port "$p_rrss" rrss
	measure sends -c "$conns" -samples 12 -redis "127.0.0.1:$p_redis2" \
		-t "name=caddy-a2a store redis (ttl 5s),kind=v1.0,url=http://127.0.0.1:$p_rrss/a2a,pid=$pid_rrss,n=$sends_redis"
	stop "$pid_rrss" "$pid_redis2" "$pid_redis"
fi

if step durable; then
	log "durable: store file and store postgres beside store memory and reverse_proxy, chunk latency, two replicas on PostgreSQL, file RSS"
	if start_postgres; then
		mkdir -p "$work/files"
		start rproxy "$bin/caddy" run --adapter caddyfile --config "$work/rproxy.caddyfile"
		start rmem "$bin/caddy" run --adapter caddyfile --config "$work/rmem.caddyfile"
		start dfile "$bin/caddy" run --adapter caddyfile --config "$work/dfile.caddyfile"
		start dpg "$bin/caddy" run --adapter caddyfile --config "$work/dpg.caddyfile"
		for pn in "$p_rproxy rproxy" "$p_rmem rmem" "$p_dfile dfile" "$p_dpg dpg"; do
			wait_port $pn
		done
		# store postgres's second CPU figure is the postmaster's alone (the
		# backends that serve the store are its children, not counted).
		measure load -title "Durable stores: blocking SendMessage (1.0), PostgreSQL on the same machine, fsync on" -c "$conns" -d "$dur" -warmup "$warmup" -rounds "$rounds" \
			-t "name=reverse_proxy → upstream,kind=ceiling,url=http://127.0.0.1:$p_rproxy/echo,pid=$pid_rproxy,up=$pid_up" \
			-t "name=caddy-a2a store memory,kind=v1.0,url=http://127.0.0.1:$p_rmem/a2a,pid=$pid_rmem,up=$pid_up" \
			-t "name=caddy-a2a store file,kind=v1.0,url=http://127.0.0.1:$p_dfile/a2a,pid=$pid_dfile,up=$pid_up" \
			-t "name=caddy-a2a store postgres,kind=v1.0,url=http://127.0.0.1:$p_dpg/a2a,pid=$pid_dpg,up=$pid_up" \
			-ceiling "reverse_proxy → upstream"
		stop "$pid_rproxy" "$pid_rmem" "$pid_dfile" "$pid_dpg"
		start drelay "$bin/caddy" run --adapter caddyfile --config "$work/drelay.caddyfile"
		for p in "$p_drelay" $((p_drelay + 1)) $((p_drelay + 2)); do
			wait_port "$p" drelay
		done
		measure storerelay -direct "http://127.0.0.1:$p_up/ndjson/500/2ms" -memory "http://127.0.0.1:$p_drelay/a2a" \
			-redis "http://127.0.0.1:$((p_drelay + 1))/a2a" -store "store postgres" -chunks 500 -d "$relay_d"
		measure storerelay -direct "http://127.0.0.1:$p_up/ndjson/500/2ms" -memory "http://127.0.0.1:$p_drelay/a2a" \
			-redis "http://127.0.0.1:$((p_drelay + 2))/a2a" -store "store file" -chunks 500 -d "$relay_d"
		stop "$pid_drelay"
		start dpga "$bin/caddy" run --adapter caddyfile --config "$work/dpga.caddyfile"
		start dpgb "$bin/caddy" run --adapter caddyfile --config "$work/dpgb.caddyfile"
		wait_port "$p_dpga" dpga
		wait_port "$p_dpgb" dpgb
		measure replicas -direct "http://127.0.0.1:$p_up/ndjson/500/2ms" -a "http://127.0.0.1:$p_dpga/a2a" \
			-b "http://127.0.0.1:$p_dpgb/a2a" -via PostgreSQL -chunks 500 -d "$relay_d"
		stop "$pid_dpga" "$pid_dpgb" "$pid_pg"
		start dfrss "$bin/caddy" run --adapter caddyfile --config "$work/dfrss.caddyfile"
		wait_port "$p_dfrss" dfrss
		measure sends -c "$conns" -samples 12 \
			-t "name=caddy-a2a store file (ttl 5s),kind=v1.0,url=http://127.0.0.1:$p_dfrss/a2a,pid=$pid_dfrss,n=$sends_redis"
		echo "store file: its directory after the sends: $(du -sh "$work/files/rss" | cut -f1)" | tee -a "$report"
		stop "$pid_dfrss"
	else
		failed=1
	fi
fi

# fds_for_idle: over HTTP/1.1 the generator and Caddy each hold one socket
# per stream (the reverse_proxy's upstream is h2c: a few more). Go raises a
# process's soft limit of descriptors to the hard one by itself, so the hard
# limit is what must be enough; root may raise it.
fds_for_idle() {
	local need=$((${idle_levels##*,} + 1024)) hard
	hard=$(ulimit -Hn)
	if [ "$hard" != unlimited ] && [ "$hard" -lt "$need" ] && ! ulimit -Hn "$need" 2>/dev/null; then
		log "idle: needs $need file descriptors per process, the hard limit is $hard (ulimit -Hn)"
		return 1
	fi
	ulimit -Sn "$(ulimit -Hn)"
}

if step idle; then
	log "streaming: idle SSE streams, caddy-a2a, the empty handler (floor) and reverse_proxy (${IDLE_PROTO:-h1,h2c}; a fresh Caddy for each)"
	idle_prof=()
	if [ -n "${PROFILE:-}" ]; then
		mkdir -p "$here/out/idle-$stamp"
		idle_prof=(-profiles "$here/out/idle-$stamp")
	fi
	# The generator starts Caddy itself, once per target and protocol, so
	# each is measured on a fresh process. The hold upstream is started
	# after the descriptor limit is raised; its memory is not measured.
	if fds_for_idle; then
		start hold "$bin/upstream" -addr "127.0.0.1:$p_hold"
		wait_port "$p_hold" hold
		measure idle -proto "${IDLE_PROTO:-h1,h2c}" -levels "$idle_levels" -settle "$settle" \
			-admin "http://127.0.0.1:$p_idle_admin" "${idle_prof[@]}" -serverlog "$work/idle.log" \
			-t "name=caddy-a2a,kind=a2a,url=http://127.0.0.1:$p_idle/a2a" \
			-t "name=empty Caddy handler (floor),kind=hold,url=http://127.0.0.1:$p_idle/hold" \
			-t "name=reverse_proxy (reference),kind=hold,url=http://127.0.0.1:$p_idle/hold/30m" \
			-floor "empty Caddy handler (floor)" \
			-- "$bin/caddy" run --adapter caddyfile --config "$work/idle.caddyfile" \
			-- "$bin/holdcaddy" run --adapter caddyfile --config "$work/idle-floor.caddyfile" \
			-- "$bin/caddy" run --adapter caddyfile --config "$work/idle-proxy.caddyfile"
		stop "$pid_hold"
	else
		failed=1
	fi
fi

if step rss; then
	log "memory: RSS across many sends (fresh processes)"
	start rss "$bin/caddy" run --adapter caddyfile --config "$work/rss.caddyfile"
	start a2ago2 "$bin/a2ago" -addr "127.0.0.1:$p_go2"
	start a2ajs2 node "$here/js/server.mjs" "127.0.0.1:$p_js2"
	for pn in "$p_rss rss" "$p_go2 a2ago2" "$p_js2 a2ajs2"; do
		wait_port $pn
	done
	measure sends -c "$conns" \
		-t "name=caddy-a2a (default max_tasks 10000),kind=v1.0,url=http://127.0.0.1:$p_rss/a2a,pid=$pid_rss,n=$sends_a2a" \
		-t "name=a2a-go v2.4.0,kind=v1.0,url=http://127.0.0.1:$p_go2/a2a,pid=$pid_a2ago2,n=$sends_sdk" \
		-t "name=a2a-js 1.3.0,kind=v1.0,url=http://127.0.0.1:$p_js2/a2a,pid=$pid_a2ajs2,n=$sends_sdk"
	stop "$pid_rss" "$pid_a2ago2" "$pid_a2ajs2"
fi

if [ -n "${PROFILE:-}" ] && step profile; then
	log "profile: the module and the ceiling under load (admin pprof)"
	caddyfile prof "$p_prof" /echo "" "admin 127.0.0.1:$((p_prof + 1))"
	cat >>"$work/prof.caddyfile" <<EOF

http://:$((p_prof + 2)) {
	bind 127.0.0.1
	reverse_proxy 127.0.0.1:$p_up
}
EOF
	start prof "$bin/caddy" run --adapter caddyfile --config "$work/prof.caddyfile"
	wait_port "$p_prof" prof
	wait_port $((p_prof + 2)) prof
	admin=http://127.0.0.1:$((p_prof + 1))

	# profile TAG TARGET: load TARGET for 14 s and profile a 10 s window of
	# it into bench/out/{cpu,allocs}-TAG-<stamp>.pprof; sets rps and the
	# allocations (per_req) and KB (kb_req) per request of the window.
	profile() {
		"$bin/loadgen" load -c "$conns" -d 14s -warmup 1s -rounds 1 -t "$2" >"$work/prof-$1.out" 2>"$work/prof-$1.err" &
		local gen=$!
		sleep 2
		# The allocation profile is cumulative: two snapshots around the
		# CPU profile's window give the allocations of that window alone.
		curl -sf -o "$work/allocs0-$1.pprof" "$admin/debug/pprof/allocs"
		curl -sf -o "$here/out/cpu-$1-$stamp.pprof" "$admin/debug/pprof/profile?seconds=10"
		curl -sf -o "$here/out/allocs-$1-$stamp.pprof" "$admin/debug/pprof/allocs"
		wait "$gen" || failed=1
		rps=$(awk '/^round/ {for (i = 1; i < NF; i++) if ($(i + 1) == "req/s") print $i}' "$work/prof-$1.err" | head -1)
		local objs bytes
		objs=$(go tool pprof -top -sample_index=alloc_objects -nodecount=1 -base "$work/allocs0-$1.pprof" "$bin/caddy" "$here/out/allocs-$1-$stamp.pprof" 2>/dev/null |
			awk '/^Showing nodes/ {gsub(",", "", $8); print $8}')
		bytes=$(go tool pprof -top -sample_index=alloc_space -unit=B -nodecount=1 -base "$work/allocs0-$1.pprof" "$bin/caddy" "$here/out/allocs-$1-$stamp.pprof" 2>/dev/null |
			awk '/^Showing nodes/ {gsub("[,B]", "", $8); print $8}')
		per_req=$((objs / (rps * 10)))
		kb_req=$((bytes / (rps * 10) / 1024))
	}
	profile ceiling "name=profiled ceiling,kind=ceiling,url=http://127.0.0.1:$((p_prof + 2))/echo,pid=$pid_prof,up=$pid_up"
	ceiling_line="ceiling (reverse_proxy, same process, just before): $rps req/s, ≈ $per_req allocations and ≈ $kb_req KB per request"
	profile a2a "name=profiled caddy-a2a v1.0,kind=v1.0,url=http://127.0.0.1:$p_prof/a2a,pid=$pid_prof,up=$pid_up"
	{
		echo
		echo "### Profile of caddy-a2a v1.0 under load ($rps req/s, $conns connections)"
		echo
		echo "Whole Caddy process over a 10 s window: ≈ $per_req allocations and ≈ $kb_req KB per request;"
		echo "$ceiling_line."
		echo "Profiles: bench/out/{cpu,allocs}-{a2a,ceiling}-$stamp.pprof (go tool pprof <file>)."
		echo
		echo "CPU, top by cumulative:"
		echo
		echo '```'
		go tool pprof -top -cum -nodecount=45 "$bin/caddy" "$here/out/cpu-a2a-$stamp.pprof" 2>/dev/null | sed -n '/flat%/,$p'
		echo '```'
		echo
		echo "Allocations in the window (objects), top by flat:"
		echo
		echo '```'
		go tool pprof -top -sample_index=alloc_objects -nodecount=25 -base "$work/allocs0-a2a.pprof" "$bin/caddy" "$here/out/allocs-a2a-$stamp.pprof" 2>/dev/null | sed -n '/flat%/,$p'
		echo '```'
		echo
	} | tee -a "$report"
	stop "$pid_prof"
fi

log "report: $report"
if [ "$failed" != 0 ]; then
	log "FAILED: a target answered wrong (see the errors columns)"
	exit 1
fi
