#!/usr/bin/env bash
# Builds tests/Chaos (XCall.Chaos) into $XCALL_CHAOS_BIN (default /tmp/xcall-chaos-bin) and runs it with the
# arguments given: the shared body of scripts/chaos.sh, load.sh, soak.sh and heap.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
out=${XCALL_CHAOS_BIN:-/tmp/xcall-chaos-bin}
dotnet build tests/Chaos -c Release -o "$out" -v q -nologo >/dev/null
exec dotnet "$out/XCall.Chaos.dll" "$@"
