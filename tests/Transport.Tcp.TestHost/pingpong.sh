#!/usr/bin/env bash
# Loopback ping-pong between two processes over XCall's TCP transport; compare with
# ../../../shared/anchors/run.sh limits quick (c-tcp, 4 B).
#   pingpong.sh [iterations]
# Prints: XCallConnection sync int call (server dispatching inline) with callers reading their own replies,
# the same with the receive thread delivering every reply (--no-lead), and a raw FrameChannel 4-byte echo.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
n=${1:-20000}
dotnet build -c Release "$here/XCall.Transport.Tcp.TestHost.csproj" -v q -nologo >/dev/null
host="$here/bin/Release/net10.0/XCall.Transport.Tcp.TestHost.dll"
run() { # run SERVER-MODE CLIENT-ARGS...
  local out; out=$(mktemp)
  dotnet "$host" "$1" 127.0.0.1 0 >"$out" &
  local pid=$!
  until grep -q READY "$out"; do kill -0 "$pid" 2>/dev/null || { cat "$out"; exit 1; }; sleep 0.05; done
  local port; port=$(awk '/READY/{print $2}' "$out")
  shift
  dotnet "$host" "$1" 127.0.0.1 "$port" "${@:2}"
  kill "$pid"; wait "$pid" 2>/dev/null || true; rm -f "$out"
}
run callserver callpingpong "$n"
run callserver callpingpong "$n" --no-lead
run server pingpong "$n" 4
