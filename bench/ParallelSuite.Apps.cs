using System.Diagnostics;
using System.Globalization;
using System.Reflection;
using System.Text.RegularExpressions;
using XCall.Cluster;

namespace XCall.Bench;

/// <summary>
/// The parallel suite's application rows: samples/PrimeSieve and samples/RayFarm as worlds of 1, 2 and 4 rank
/// processes, with <c>--adaptive</c> (Agglomeration.Adaptive) and without, at the finest grain (one candidate or
/// one line per call, aggregation left to the library), next to the best grain of a sweep in the same run. A sieve
/// cell is the median of several runs alternated with the row's other cells (one sample per cell orders nothing
/// on a shared machine); the ray tracer's cells are one run each, to keep the suite within a few minutes.
/// </summary>
internal static partial class ParallelSuite
{
    private static readonly TimeSpan s_appLimit = TimeSpan.FromMinutes(5);

    private static void RunApps(int appRounds)
    {
        Console.WriteLine();
        Console.WriteLine($"# application rows: each cell is the median of {appRounds} runs (sieve) or 1 run (ray tracer); a round runs");
        Console.WriteLine("# adaptive, not adaptive and each swept grain once, one after the other, so the cells of a row share the minutes");
        Console.WriteLine();
        long start = Stopwatch.GetTimestamp();
        var runs = new List<string>();
        Console.WriteLine("| application (ranks) | adaptive, finest grain (s) | not adaptive, finest grain (s) | best swept grain (s) | adaptive / best |");
        Console.WriteLine("|---|---:|---:|---:|---:|");
        foreach (int ranks in new[] { 1, 2, 4 })
        {
            AppRow("PrimeSievePath", $"sieve N = 2,000,000, 4 filters ({ranks})", ranks, ["--n", "2000000", "--filters", "4"], "--grain", [1, 100, 1000, 10000], appRounds, runs);
        }
        foreach (int ranks in new[] { 1, 2, 4 })
        {
            AppRow("RayFarmPath", $"ray tracer 500x500 ({ranks})", ranks, [], "--lines", [1, 5, 25, 100], 1, runs);
        }
        Console.WriteLine();
        foreach (string line in runs)
        {
            Console.WriteLine(line);
        }
        Console.WriteLine($"application rows took {Stopwatch.GetElapsedTime(start).TotalSeconds:F0} s");
    }

    /// <summary>
    /// One row: <paramref name="rounds"/> rounds, each running the adaptive cell, the not adaptive one and every grain
    /// of the sweep once; each cell is the median of its runs (the runs themselves go to <paramref name="runs"/>).
    /// </summary>
    private static void AppRow(string key, string label, int ranks, string[] common, string grainOption, int[] grains, int rounds, List<string> runs)
    {
        string? path = typeof(ParallelSuite).Assembly.GetCustomAttributes<AssemblyMetadataAttribute>().FirstOrDefault(a => a.Key == key)?.Value;
        if (path is null || !File.Exists(path))
        {
            Console.WriteLine($"| {label} | skipped: {path ?? key} is not built | | | |");
            return;
        }
        try
        {
            string finest = grains[0].ToString(CultureInfo.InvariantCulture);
            var adaptive = new List<double>();
            var fixedRuns = new List<double>();
            List<double>[] swept = [.. grains.Select(_ => new List<double>())];
            for (int round = 0; round < rounds; round++)
            {
                adaptive.Add(RunWorld(path, ranks, [.. common, grainOption, finest, "--adaptive"]));
                fixedRuns.Add(RunWorld(path, ranks, [.. common, grainOption, finest]));
                for (int g = 0; g < grains.Length; g++)
                {
                    swept[g].Add(RunWorld(path, ranks, [.. common, grainOption, grains[g].ToString(CultureInfo.InvariantCulture)]));
                }
            }
            (double best, int bestGrain) = grains.Select((g, i) => (Stats.Median(swept[i]), g)).Min();
            double a = Stats.Median(adaptive);
            Console.WriteLine($"| {label} | {a:F3} | {Stats.Median(fixedRuns):F3} | {best:F3} ({grainOption} {bestGrain}) | {a / best:F2}x |");
            runs.Add($"runs of {label} (s): adaptive {Join(adaptive)}; not adaptive {Join(fixedRuns)}; "
                + string.Join("; ", grains.Select((g, i) => $"{grainOption} {g} {Join(swept[i])}")));
        }
        catch (Exception e) when (e is InvalidOperationException or TimeoutException)
        {
            Console.WriteLine($"| {label} | failed: {e.Message.ReplaceLineEndings(" ")} | | | |");
        }
    }

    private static string Join(List<double> values) => string.Join(", ", values.Select(v => v.ToString("F3", CultureInfo.InvariantCulture)));

    /// <summary>Runs <paramref name="ranks"/> rank processes of the sample; the seconds rank 0 reports.</summary>
    private static double RunWorld(string path, int ranks, string[] arguments)
    {
        string job = $"pa{Environment.ProcessId}-{Guid.NewGuid():N}"[..20];
        var processes = new List<(Process Process, Task<string> Output, Task<string> Errors)>();
        for (int rank = 0; rank < ranks; rank++)
        {
            var start = new ProcessStartInfo("dotnet") { UseShellExecute = false, RedirectStandardOutput = true, RedirectStandardError = true };
            start.ArgumentList.Add(path);
            foreach (string argument in arguments)
            {
                start.ArgumentList.Add(argument);
            }
            start.Environment[WorldEnvironment.RankVariable] = rank.ToString(CultureInfo.InvariantCulture);
            start.Environment[WorldEnvironment.SizeVariable] = ranks.ToString(CultureInfo.InvariantCulture);
            start.Environment[WorldEnvironment.JobIdVariable] = job;
            Process process = Process.Start(start)!;
            processes.Add((process, process.StandardOutput.ReadToEndAsync(), process.StandardError.ReadToEndAsync()));
        }
        try
        {
            foreach ((Process process, _, _) in processes)
            {
                if (!process.WaitForExit(s_appLimit))
                {
                    throw new TimeoutException($"{Path.GetFileName(path)} {string.Join(' ', arguments)} did not end within {s_appLimit}");
                }
            }
            string text = processes[0].Output.GetAwaiter().GetResult();
            Match seconds = SecondsLine().Match(text);
            if (processes.All(p => p.Process.ExitCode == 0) && seconds.Success)
            {
                return double.Parse(seconds.Groups[1].Value, CultureInfo.InvariantCulture);
            }
            // Every rank's exit code and the end of its error output: a rank that failed says why there.
            string ranksSaid = string.Join("; ", processes.Select((p, rank) =>
                $"rank {rank} exit {p.Process.ExitCode}: {Tail(p.Errors.GetAwaiter().GetResult())}"));
            throw new InvalidOperationException($"{Path.GetFileName(path)} {string.Join(' ', arguments)} failed: {text} {ranksSaid}");
        }
        finally
        {
            foreach ((Process process, _, _) in processes)
            {
                if (!process.HasExited)
                {
                    process.Kill(entireProcessTree: true);
                }
                process.Dispose();
            }
        }
    }

    private static string Tail(string text) => text.Length <= 400 ? text.Trim() : "..." + text[^400..].Trim();

    [GeneratedRegex(@" in (\d+\.\d+) s")]
    private static partial Regex SecondsLine();
}
