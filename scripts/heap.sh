#!/usr/bin/env bash
# Heap: one call with a MIB-sized byte[] argument to a fresh server over shm, lent (the default) and as one
# frame streamed through the ring; 5 s after the connection closes, the server's live heap after a full GC
# must be within 64 MiB of what it was before (tests/Chaos, XCall.Chaos).
#
#   scripts/heap.sh [MIB]                     default 512
exec "$(dirname "$0")/lib/chaos-tool.sh" heap "${1:-512}"
