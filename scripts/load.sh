#!/usr/bin/env bash
# Load: per transport (shm, tcp), CALLERS threads in four processes make CALLS checked calls each against one
# server (tests/Chaos, XCall.Chaos). Prints calls/s and p50 / p99 / p99.9 / max per transport, each line ending
# in PASS or FAIL (a wrong answer or a failed call); exit 1 on FAIL.
#
#   scripts/load.sh [CALLERS] [CALLS]         default 64 callers x 1,000,000 calls
set -euo pipefail
cd "$(dirname "$0")/.."
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
out=${XCALL_CHAOS_BIN:-/tmp/xcall-chaos-bin}
dotnet build tests/Chaos -c Release -o "$out" -v q -nologo >/dev/null
exec dotnet "$out/XCall.Chaos.dll" load "${1:-64}" "${2:-1000000}"
