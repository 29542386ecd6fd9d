#!/usr/bin/env bash
# Where one form of call spends its time, per stage and side: runs the bench's --loop (a call in a loop against the
# default server process), records both processes with perf (linux-perf from Debian) while it runs, and sums the
# samples by stage (symbol patterns below), printed as CPU nanoseconds per call.
#
#   scripts/profile-call.sh [shm|tcp] [int|callback|oneway|pipelined|threads] [SECONDS]     defaults: shm int 8
#   BENCH_DLL=/work/base/<build>/XCall.Bench.dll scripts/profile-call.sh ...        another build (this tree is not built)
#   TOP=14 scripts/profile-call.sh shm oneway 5                                      also the 14 busiest symbols per side
#
# JIT frames are named through perf maps (DOTNET_PerfMapEnabled=1) with W^X off (DOTNET_EnableWriteXorExecute=0),
# or perf sees them as anonymous memory. A stage's figure is its samples / the sampling rate / the calls made in
# the recorded window; on a loaded machine the spinning waits also count the time the peer had no core. A side's
# shares are taken of its own samples (perf report --percentage relative with --pid), so its stages add up to its
# CPU time per call.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
transport="${1:-shm}"
form="${2:-int}"
seconds="${3:-8}"
rate=4999
command -v perf >/dev/null || { echo "profile-call: perf is not installed (Debian: apt-get install linux-perf)" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
if [[ -z "${BENCH_DLL:-}" ]]; then
    dotnet build "$root/bench" -c Release -nologo -v quiet >"$work/build.log" || { cat "$work/build.log" >&2; exit 1; }
fi
export DOTNET_PerfMapEnabled=1 DOTNET_EnableWriteXorExecute=0

# The loop runs two seconds longer than the recording on each side, so the window sees only the steady loop.
dotnet "${BENCH_DLL:-$root/bench/bin/Release/net10.0/XCall.Bench.dll}" --loop "$transport" "$form" "$((seconds + 4))" >"$work/loop.out" 2>&1 &
loop=$!
for _ in $(seq 100); do grep -q "server pid" "$work/loop.out" && break; sleep 0.1; done
read -r client server < <(sed -nE 's/^client pid ([0-9]+), server pid ([0-9]+).*/\1 \2/p' "$work/loop.out")
[[ -n "${client:-}" ]] || { cat "$work/loop.out" >&2; exit 1; }
sleep 2
perf record -q -F "$rate" -g -p "$client,$server" -o "$work/perf.data" -- sleep "$seconds" >/dev/null 2>&1
wait "$loop"
cat "$work/loop.out"
ns_per_call=$(sed -nE 's/.* ([0-9.]+) ns per call.*/\1/p' "$work/loop.out")

# Stage of a symbol, by side. Order matters: the first match wins.
stages() {
    awk -v side="$1" '
    function stage(sym) {
        if (sym ~ /XCallProxy|MarshalWriter|ProxyBase/) return "proxy and arguments";
        if (sym ~ /XCallDispatcher|ServerCall|::Invoke\(|RunDetached|FindObject|ResultWriter|Dispatch/) return "dispatch and result";
        if (sym ~ /CallCostService|ThroughputService/) return "target method";
        if (sym ~ /BeginFrame|Commit|RingWriter|Lock::|ClaimConsumerWake|IssueConsumerWake|BeginCallFrame|SendAndWait|Socket.*Send|send/) return "frame out (lock, ring or socket)";
        if (sym ~ /Pump|IdleSpinner|SpinWait|SpinOnce|PendingCall::Wait|ReceiveLoop|RingReader|Poll|recv|epoll/) return "waiting and polling";
        if (sym ~ /GetReplyReader|CompleteWithReply|OnFrame|PendingCall/) return "reply in";
        if (sym ~ /ThreadPool|Task|AsyncStateMachine|ExecutionContext|ValueTaskSource/) return "thread pool and tasks";
        if (sym ~ /\[k\]/) return "kernel (futex, scheduler)";
        return "runtime and other (TLS, casts, write barriers, unnamed native code)";
    }
    /%/ { pct = $1; sub(/%/, "", pct); $1 = ""; k = stage($0); s[k] += pct; if (k ~ /^runtime/ && pct > 1 && ENVIRON["PROFILE_OTHERS"] != "") print "other: " pct " " $0 > "/dev/stderr" }
    END { for (k in s) printf "%s\t%s\t%.2f\n", side, k, s[k] }'
}
samples() { perf script -i "$work/perf.data" -F pid 2>/dev/null | awk -v p="$1" '$1 == p {n++} END {print n+0}'; }
echo
echo "$form over $transport: CPU ns per call by stage (perf at $rate Hz for ${seconds} s; ${ns_per_call} ns per call)"
printf '| side | stage | ns per call |\n|---|---|---:|\n'
for side in client server; do
    pid=$([[ $side == client ]] && echo "$client" || echo "$server")
    n=$(samples "$pid")
    perf report -i "$work/perf.data" -q --no-children --percentage relative --pid "$pid" --sort sym -g none 2>/dev/null | stages "$side" |
        awk -F'\t' -v n="$n" -v rate="$rate" -v secs="$seconds" -v per="$ns_per_call" \
            '{ ns = ($3 / 100.0) * n / rate / (secs * 1e9 / per) * 1e9; printf "| %s | %s | %.1f |\n", $1, $2, ns }' | sort -t'|' -k4 -gr
done
# TOP=N: also each side's N busiest symbols, ungrouped (which method of a stage moved between two builds).
# head closes the pipe early, so perf report ends on SIGPIPE: that is not a failure here.
if [[ -n "${TOP:-}" ]]; then
    set +o pipefail
    for side in client server; do
        pid=$([[ $side == client ]] && echo "$client" || echo "$server")
        n=$(samples "$pid")
        echo
        echo "$side: busiest symbols, CPU ns per call"
        perf report -i "$work/perf.data" -q --no-children --percentage relative --pid "$pid" --sort sym -g none 2>/dev/null | head -"$TOP" |
            awk -v n="$n" -v rate="$rate" -v secs="$seconds" -v per="$ns_per_call" \
                '{ pct = $1; sub(/%/, "", pct); $1 = ""; printf "%8.1f %s\n", pct / 100 * n / rate / (secs * 1e9 / per) * 1e9, substr($0, 1, 120) }'
    done
fi
