#!/usr/bin/env bash
# Interop suite: the real a2a-go (v2.4.0 over 1.0 and its 0.3 compat transport,
# v0.3.15) and @a2a-js/sdk 1.3.0 clients against Caddy with the a2a handler.
# Installs the JS client (npm ci, from the committed lock file), then runs the
# Go tests of this nested module, which start Caddy in-process, the scripted
# agent, the real peer agents (a2a-go v2/v0.3 and the @a2a-js/sdk server
# under node, on free loopback ports), and `node --test` for the JS suite. Ports 9180-9199 must be free.
#   INTEROP_CADDY_LOG=DEBUG bash interop/run.sh    # Caddy's own log, for a failure
#   INTEROP_RUN=TestA2AGoV03 bash interop/run.sh   # one test (go test -run)
#   INTEROP_VERBOSE=1 bash interop/run.sh          # go test -v (node's output too)
set -euo pipefail
cd "$(dirname "$0")"

echo "== interop: npm ci (interop/js)"
(cd js && npm ci --no-audit --no-fund --loglevel=error)

echo "== interop: go vet"
go vet ./...

echo "== interop: go test"
flags=(-race -count=1 -run "${INTEROP_RUN:-.}")
if [ -n "${INTEROP_VERBOSE:-}" ]; then
  flags+=(-v)
fi
go test "${flags[@]}" ./...
