#!/usr/bin/env bash
# The matrix multiply (samples/MatrixMultiply) side by side with its C / Open MPI twin, alternated, on this machine.
#
#   scripts/matmul-sweep.sh [--ranks "2 4"] [--rows "2400 4800"] [--repeat N]
#
# For every rank count and row count, N times (default 2): the C program under `mpirun --oversubscribe --bind-to
# none`, then the sample as an XCall world of the same size (XCall's rank variables, what `xcall run` sets), each
# printing its seconds (broadcast of B to the last row of C) and checksum; then the ratio XCall / C of that pair.
# A line `summary RANKS ROWS median-ratio` closes each size. Needs mpicc and mpirun (scripts/install-peers.sh);
# builds the sample with `dotnet build -c Release` first. PMPI's sweep is 2,400 ... 19,200 rows.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ranks_list="2 4"
rows_list="2400 4800"
repeat=2
while [[ $# -gt 0 ]]; do
    case "$1" in
        --ranks) ranks_list="$2"; shift 2 ;;
        --rows) rows_list="$2"; shift 2 ;;
        --repeat) repeat="$2"; shift 2 ;;
        *) sed -n '2,10p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
    esac
done
for tool in mpicc mpirun dotnet; do
    command -v "$tool" >/dev/null || { echo "matmul-sweep: $tool is not installed (scripts/install-peers.sh installs Open MPI)" >&2; exit 1; }
done

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mpicc -O2 -o "$work/matmul_mpi" "$root/samples/MatrixMultiply/matmul_mpi.c"
dotnet build "$root/samples/MatrixMultiply" -c Release -nologo -v quiet >"$work/build.log" || { cat "$work/build.log" >&2; exit 1; }
sample="$root/samples/MatrixMultiply/bin/Release/net10.0/XCall.Samples.MatrixMultiply.dll"

# Runs the sample as a world of $1 ranks on $2 rows; prints rank 0's line.
xcall_world() {
    local size="$1" rows="$2" job="matmul-sweep-$$-$RANDOM" pids=()
    for ((r = 0; r < size; r++)); do
        XCALL_RANK=$r XCALL_SIZE=$size XCALL_JOB_ID=$job dotnet "$sample" "$rows" >"$work/rank$r.out" 2>&1 &
        pids+=($!)
    done
    for pid in "${pids[@]}"; do wait "$pid"; done
    cat "$work/rank0.out"
}

seconds_of() { sed -n 's/.*seconds=\([0-9.]*\).*/\1/p' <<<"$1"; }

echo "matmul sweep, $(nproc) cores, loadavg $(cut -d' ' -f1-3 /proc/loadavg)"
for size in $ranks_list; do
    for rows in $rows_list; do
        ratios=()
        for ((i = 0; i < repeat; i++)); do
            c_line="$(mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$size" "$work/matmul_mpi" "$rows")"
            x_line="$(xcall_world "$size" "$rows")"
            ratio="$(awk -v x="$(seconds_of "$x_line")" -v c="$(seconds_of "$c_line")" 'BEGIN { printf "%.2f", x / c }')"
            ratios+=("$ratio")
            echo "$c_line"
            echo "$x_line"
            echo "ratio xcall/c ranks=$size rows=$rows: ${ratio}x (loadavg $(cut -d' ' -f1 /proc/loadavg))"
        done
        median="$(printf '%s\n' "${ratios[@]}" | sort -n | awk '{ a[NR] = $1 } END { print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }')"
        echo "summary ranks=$size rows=$rows median ratio ${median}x"
    done
done
