#!/usr/bin/env bash
# CPU time per call of one form of call, client and server process, beside its rate: runs the bench's --loop and
# reads both processes' CPU time (/proc/PID/stat, user + system) over a window inside the run. On a machine whose
# cores other work also wants, the rate moves with that work; the CPU time a call costs moves much less (spinning
# waits still count, and grow when the peer has no core). It also counts the receive threads ("xcall shm://..." or
# "xcall tcp://..."; /proc/PID/task read every 100 ms) each process started in the window: a new one is a
# hand-over of the receiving by the detach watch (docs/remoting.md, "Dispatch").
#
#   scripts/loop-cpu.sh [shm|tcp] [int|oneway|pipelined|pipelined-valuetask] [SECONDS] [BENCH_DLL]     defaults: shm pipelined 6, this tree's bench
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
transport="${1:-shm}"
form="${2:-pipelined}"
seconds="${3:-6}"
dll="${4:-$root/bench/bin/Release/net10.0/XCall.Bench.dll}"
[[ -f "$dll" ]] || { echo "loop-cpu: $dll not found (dotnet build bench -c Release)" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
ticks=$(getconf CLK_TCK)
cpu() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# The window starts 2 s in (startup and JIT done) and ends 1 s before the loop does.
dotnet "$dll" --loop "$transport" "$form" "$((seconds + 3))" >"$work/loop.out" 2>&1 &
loop=$!
for _ in $(seq 200); do grep -q "server pid" "$work/loop.out" 2>/dev/null && break; sleep 0.05; done
read -r client server < <(sed -nE 's/^client pid ([0-9]+), server pid ([0-9]+).*/\1 \2/p' "$work/loop.out")
[[ -n "${client:-}" ]] || { cat "$work/loop.out" >&2; exit 1; }
receivers() { grep -l '^xcall \(shm\|tcp\)://' /proc/"$1"/task/*/comm 2>/dev/null | cut -d/ -f5 || true; }
sleep 2
receivers "$client" >"$work/client.before"; receivers "$server" >"$work/server.before"
c0=$(cpu "$client"); s0=$(cpu "$server"); t0=$(date +%s.%N)
( end=$((SECONDS + seconds)); while ((SECONDS < end)); do receivers "$client" >>"$work/client.seen"; receivers "$server" >>"$work/server.seen"; sleep 0.1; done ) &
sleep "$seconds"
c1=$(cpu "$client"); s1=$(cpu "$server"); t1=$(date +%s.%N)
wait "$!" 2>/dev/null || true
started() { sort -u "$work/$1.seen" 2>/dev/null | comm -13 <(sort -u "$work/$1.before") - | wc -l; }
wait "$loop"
rate=$(sed -nE 's/.* ([0-9.]+) ns per call.*/\1/p' "$work/loop.out")
awk -v c="$((c1 - c0))" -v s="$((s1 - s0))" -v hz="$ticks" -v t="$(echo "$t1 - $t0" | bc)" -v ns="$rate" -v form="$form" -v tr="$transport" \
    -v load="$(cut -d' ' -f1 /proc/loadavg)" -v cr="$(started client)" -v sr="$(started server)" 'BEGIN {
        calls = t * 1e9 / ns
        printf "%s over %s: %.2f M calls/s (%.1f ns per call); CPU per call: client %.0f ns, server %.0f ns; receive threads started: client %d, server %d; load %s\n",
            form, tr, 1e3 / ns, ns, c / hz * 1e9 / calls, s / hz * 1e9 / calls, cr, sr, load }'
