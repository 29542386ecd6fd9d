#!/usr/bin/env bash
# Soak: two callers (shm, tcp) connect, make 100 checked calls and disconnect, again and again, for MINUTES;
# the server's resident memory, descriptors and threads are sampled thirty times (tests/Chaos, XCall.Chaos).
# Prints the samples and one summary line ending in PASS (no wrong answer, no failed call, last quarter of
# the samples within bounds of the first) or FAIL (exit 1).
#
#   scripts/soak.sh [MINUTES]                 default 30
exec "$(dirname "$0")/lib/chaos-tool.sh" soak "${1:-30}"
