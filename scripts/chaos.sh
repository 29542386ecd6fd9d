#!/usr/bin/env bash
# Chaos: kill -9 and SIGSTOP/SIGCONT of servers and callers at random moments of calls over shm and tcp
# (tests/Chaos, XCall.Chaos). Each iteration: a ledger server, two shm and two tcp callers appending ids;
# then the server is killed, a caller is killed, or the server is paused and then killed. Checks no hang
# (30 s bound), no lost acknowledged append, nothing left in /dev/shm or the socket folder, survivors served.
#
#   scripts/chaos.sh [ITERATIONS] [SEED]      default 1000 iterations (about 2-3 s each on 2 cores)
#
# Prints the detection times per transport and side, then one summary line ending in PASS or FAIL (exit 1).
exec "$(dirname "$0")/lib/chaos-tool.sh" chaos "${1:-1000}" ${2:+"$2"}
