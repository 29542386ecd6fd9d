#!/usr/bin/env bash
# Coverage-guided fuzzing of XCall's readers: SharpFuzz instruments the built assemblies and AFL++ drives the
# harness of tests/Fuzz.Tests (XCall.Fuzz.Tests.dll run as a program, not under `dotnet test`) with mutated
# inputs, starting from its generated seeds and the kept corpus.
#
#   scripts/fuzz.sh TARGET MINUTES    one target (marshal, args, frame, tcp, shm, ring), or "all" for each in turn
#   scripts/fuzz.sh list              the targets and what they read
#
# Needs afl-fuzz (Debian package afl++: scripts/install-peers.sh installs it). Every crash or hang found is
# written to tests/Fuzz.Tests/corpus/TARGET/ as a .hex file: FuzzCorpusTests replays that folder in `dotnet test`,
# so commit it with the fix. Prints one summary line per target; exits 1 when any target found a crash or hang.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1

work=${XCALL_FUZZ_WORK:-/tmp/xcall-fuzz}
plain="$work/plain" # as built: lists targets, writes seeds, replays findings
out="$work/bin"     # instrumented: runs only under afl-fuzz (its module initializers need AFL's shared memory)
corpus=tests/Fuzz.Tests/corpus
if [[ ${1:-} == list ]]; then
    dotnet build tests/Fuzz.Tests -c Release -o "$plain" -v q -nologo >/dev/null
    dotnet "$plain/XCall.Fuzz.Tests.dll" list
    exit 0
fi
if [[ $# -ne 2 || ! $2 =~ ^[0-9]+$ ]]; then
    echo "usage: scripts/fuzz.sh TARGET|all MINUTES   (scripts/fuzz.sh list: the targets)" >&2
    exit 2
fi
target=$1 minutes=$2
command -v afl-fuzz >/dev/null || { echo "fuzz: afl-fuzz not found; install Debian's afl++ (scripts/install-peers.sh)" >&2; exit 2; }

# Build, then instrument the readers, and only them: not the harness (XCall.Fuzz.Tests) nor XCall.FastProxy, whose
# generated module initializers run their code before SharpFuzz sets up the coverage map (instrumented code crashes
# there), and not the xunit and test SDK assemblies the harness's project carries for `dotnet test`.
rm -rf "$out" "$plain"
dotnet tool restore >/dev/null
dotnet build tests/Fuzz.Tests -c Release -o "$plain" -v q -nologo >/dev/null
cp -r "$plain" "$out"
for dll in XCall.Marshal XCall.Transport XCall.Transport.Tcp XCall.Transport.Shm; do
    dotnet sharpfuzz "$out/$dll.dll" >/dev/null
done

if [[ $target == all ]]; then
    targets=$(dotnet "$plain/XCall.Fuzz.Tests.dll" list | awk '{print $1}')
else
    targets=$target
fi

export AFL_SKIP_BIN_CHECK=1 AFL_NO_UI=1 AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_AFFINITY=1
status=0
for t in $targets; do
    seeds="$work/seeds"
    rm -rf "$seeds" "$work/findings-$t"
    dotnet "$plain/XCall.Fuzz.Tests.dll" seeds "$seeds"
    # The kept corpus (crashes found before, hand-written cases) joins the generated seeds.
    for hex in "$corpus/$t"/*.hex; do
        [[ -e $hex ]] || continue
        tr -d ' \n\r\t' < "$hex" | xxd -r -p > "$seeds/$t/kept-$(basename "$hex" .hex)"
    done
    echo "fuzz $t: $minutes min, seeds $(ls "$seeds/$t" | wc -l)"
    afl-fuzz -i "$seeds/$t" -o "$work/findings-$t" -t 20000 -m none -V $((minutes * 60)) \
        -- dotnet "$out/XCall.Fuzz.Tests.dll" "$t" > "$work/afl-$t.log" 2>&1 || {
        echo "fuzz $t: afl-fuzz failed, see $work/afl-$t.log" >&2; tail -20 "$work/afl-$t.log" >&2; status=1; continue; }

    stats="$work/findings-$t/default/fuzzer_stats"
    stat() { awk -F' *: *' -v k="$1" '$1 == k {print $2}' "$stats"; }
    found=0
    for kind in crashes hangs; do
        for f in "$work/findings-$t/default/$kind"/id:*; do
            [[ -e $f ]] || continue
            found=$((found + 1))
            name="$kind-$(sha256sum "$f" | cut -c1-12)"
            mkdir -p "$corpus/$t"
            xxd -p "$f" > "$corpus/$t/$name.hex"
            echo "fuzz $t: kept $kind input $corpus/$t/$name.hex; replay:"
            dotnet "$plain/XCall.Fuzz.Tests.dll" run "$t" "$corpus/$t/$name.hex" | head -12 || true
        done
    done
    verdict=PASS
    if ((found > 0)); then verdict=FAIL; status=1; fi
    echo "fuzz $t: $(stat execs_done) executions ($(stat execs_per_sec)/s), $(stat corpus_count) paths, coverage $(stat bitmap_cvg) of the map, $(stat saved_crashes) crashes, $(stat saved_hangs) hangs: $verdict"
done
exit $status
