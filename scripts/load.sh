#!/usr/bin/env bash
# Load: per transport (shm, tcp), CALLERS threads in four processes make CALLS checked calls each against one
# server (tests/Chaos, XCall.Chaos). Prints calls/s and p50 / p99 / p99.9 / max per transport, each line ending
# in PASS or FAIL (a wrong answer or a failed call); exit 1 on FAIL.
#
#   scripts/load.sh [CALLERS] [CALLS]         default 64 callers x 1,000,000 calls
exec "$(dirname "$0")/lib/chaos-tool.sh" load "${1:-64}" "${2:-1000000}"
