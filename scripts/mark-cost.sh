#!/usr/bin/env bash
# What DetachedFrames' mark costs in one thread with no peer: times 2 million Begin()+End() pairs (a detached sync call)
# and Pause()+Resume() pairs (a one-way frame of a run), best of 15 rounds, against the XCall.Transport.dll of each
# bench build given (a directory holding XCall.Transport.dll and XCall.Marshal.dll, e.g. bench/bin/Release/net10.0).
#
#   scripts/mark-cost.sh BUILD_DIR [BUILD_DIR...]
set -euo pipefail
[[ $# -ge 1 ]] || { echo "usage: scripts/mark-cost.sh BUILD_DIR [BUILD_DIR...]" >&2; exit 2; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cat >"$work/MarkCost.csproj" <<PROJ
<Project Sdk="Microsoft.NET.Sdk">
  <PropertyGroup><OutputType>Exe</OutputType><TargetFramework>net10.0</TargetFramework><Nullable>enable</Nullable><ImplicitUsings>enable</ImplicitUsings></PropertyGroup>
  <ItemGroup><Reference Include="XCall.Transport"><HintPath>$(cd "$1" && pwd)/XCall.Transport.dll</HintPath></Reference></ItemGroup>
</Project>
PROJ
cat >"$work/Program.cs" <<'CS'
using System.Diagnostics;
using XCall.Transport;

var frames = new DetachedFrames(() => { }, () => false);
double Best(Action<int> body)
{
    double best = double.MaxValue;
    for (int r = 0; r < 15; r++)
    {
        var clock = Stopwatch.StartNew();
        body(2_000_000);
        best = Math.Min(best, clock.Elapsed.TotalNanoseconds / 2_000_000);
    }
    return best;
}
double beginEnd = Best(n => { for (int i = 0; i < n; i++) { frames.Begin(); frames.End(); } });
frames.Begin();
double pauseResume = Best(n => { for (int i = 0; i < n; i++) { if (frames.Pause()) { frames.Resume(); } } });
frames.End();
Console.WriteLine($"{args[0]}: Begin+End {beginEnd:0.0} ns, Pause+Resume {pauseResume:0.0} ns, load {File.ReadAllText("/proc/loadavg").Split(' ')[0]}");
CS
dotnet build "$work" -c Release -nologo -v quiet -o "$work/out" >"$work/build.log" || { cat "$work/build.log" >&2; exit 1; }
for build in "$@"; do
    mkdir -p "$work/run"
    cp "$work/out/"* "$work/run/"
    cp "$build/XCall.Transport.dll" "$build/XCall.Marshal.dll" "$work/run/"
    dotnet "$work/run/MarkCost.dll" "$build"
    rm -rf "$work/run"
done
