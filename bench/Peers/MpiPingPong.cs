using System.Diagnostics;
using System.Globalization;

namespace XCall.Bench.Peers;

/// <summary>
/// Open MPI's ping-pong between two ranks (Probes/mpi_pingpong.c), the <c>peer-mpi</c> rows: compiled with
/// <c>mpicc</c> at run time, like the limit probe, and started with <c>mpirun -np 2</c>. Needs Debian's
/// openmpi-bin and libopenmpi-dev (scripts/install-peers.sh); without them <see cref="Measure"/> returns
/// <see langword="null"/> and <see cref="WhyNot"/> says why.
/// </summary>
internal static class MpiPingPong
{
    /// <summary>One size: best and median of five batches, ns per round trip (the message goes there and back).</summary>
    public sealed record Result(int Bytes, double BestNs, double MedianNs);

    /// <summary>The sizes of the peer-mpi rows and their round trips per batch: the int and byte sizes, and 1 MiB.</summary>
    public static readonly (int Bytes, long Rounds)[] RowSizes = [(4, 100_000), (1000, 50_000), (1 << 20, 200)];

    private static readonly Lazy<(string? Binary, string? Reason)> s_binary = new(() => Compile("mpi_pingpong.c"));

    private static readonly Lazy<(string? Binary, string? Reason)> s_allreduce = new(() => Compile("mpi_allreduce.c"));

    private static string? s_lastFailure;

    /// <summary>Why the last <see cref="Measure"/> gave nothing: Open MPI missing, the build or the run failed.</summary>
    public static string? WhyNot => s_binary.Value.Reason ?? s_lastFailure;

    /// <summary>The ranks' placement: left to the scheduler, as for XCall's processes and the limit probe.</summary>
    private static readonly string[] s_mpirunOptions = ["--oversubscribe", "--bind-to", "none"];

    /// <summary>
    /// Runs the ping-pong at each size (a warm-up, then five batches of the given round trips) in one
    /// <c>mpirun</c>; <see langword="null"/> when Open MPI is not installed or the run failed.
    /// </summary>
    public static IReadOnlyList<Result>? Measure(params (int Bytes, long Rounds)[] sizes) => Run(s_binary.Value, 2, "peer-mpi", sizes);

    /// <summary>Open MPI's Allreduce (Probes/mpi_allreduce.c) on <paramref name="ranks"/> ranks, ns per Allreduce; null as for <see cref="Measure"/>.</summary>
    public static IReadOnlyList<Result>? MeasureAllreduce(int ranks, params (int Bytes, long Rounds)[] sizes) =>
        Run(s_allreduce.Value, ranks, "peer-mpi-allreduce", sizes);

    /// <summary>Why the last <see cref="MeasureAllreduce"/> gave nothing.</summary>
    public static string? WhyNotAllreduce => s_allreduce.Value.Reason ?? s_lastFailure;

    private static IReadOnlyList<Result>? Run((string? Binary, string? Reason) compiled, int ranks, string label, (int Bytes, long Rounds)[] sizes)
    {
        if (compiled.Binary is not { } binary)
        {
            return null;
        }
        var arguments = new List<string>();
        if (Environment.IsPrivilegedProcess)
        {
            arguments.Add("--allow-run-as-root");
        }
        arguments.AddRange(s_mpirunOptions);
        arguments.AddRange(["-np", ranks.ToString(CultureInfo.InvariantCulture), binary]);
        arguments.AddRange(sizes.Select(s => string.Create(CultureInfo.InvariantCulture, $"{s.Bytes}:{s.Rounds}")));
        var start = new ProcessStartInfo("mpirun", arguments)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            RedirectStandardInput = true, // mpirun forwards its input to rank 0: give it none
        };
        using Process p = Process.Start(start)!;
        p.StandardInput.Close();
        Task<string> error = p.StandardError.ReadToEndAsync();
        Task<string> output = p.StandardOutput.ReadToEndAsync();
        if (!p.WaitForExit(TimeSpan.FromMinutes(2)))
        {
            p.Kill(entireProcessTree: true);
            s_lastFailure = "mpirun did not finish within 2 minutes";
            return null;
        }
        var results = new List<Result>();
        foreach (string line in output.Result.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
        {
            string[] f = line.Split(' ');
            if (f.Length == 4 && f[0] == label)
            {
                results.Add(new Result(int.Parse(f[1], CultureInfo.InvariantCulture), double.Parse(f[2], CultureInfo.InvariantCulture), double.Parse(f[3], CultureInfo.InvariantCulture)));
            }
        }
        if (p.ExitCode != 0 || results.Count != sizes.Length)
        {
            s_lastFailure = $"mpirun exited with {p.ExitCode}: {FirstLine(error.Result)}";
            return null;
        }
        s_lastFailure = null;
        return results;
    }

    private static (string? Binary, string? Reason) Compile(string probe)
    {
        string source = Path.Combine(AppContext.BaseDirectory, "Probes", probe);
        if (!File.Exists(source))
        {
            return (null, $"{source} is missing");
        }
        if (!OnPath("mpicc") || !OnPath("mpirun"))
        {
            return (null, "Open MPI is not installed (no mpicc or mpirun on PATH; Debian: openmpi-bin libopenmpi-dev, see scripts/install-peers.sh)");
        }
        string output = Path.Combine(Path.GetTempPath(), $"xcall-{Path.GetFileNameWithoutExtension(probe).Replace('_', '-')}-{File.GetLastWriteTimeUtc(source).Ticks}");
        if (File.Exists(output))
        {
            return (output, null);
        }
        // Built under a temporary name and moved into place, so a build cut short leaves no binary behind.
        string building = $"{output}.{Environment.ProcessId}";
        using Process p = Process.Start(new ProcessStartInfo("mpicc", ["-O2", "-o", building, source]) { RedirectStandardError = true, RedirectStandardOutput = true })!;
        Task<string> error = p.StandardError.ReadToEndAsync();
        p.StandardOutput.ReadToEnd();
        p.WaitForExit();
        if (p.ExitCode != 0 || !File.Exists(building))
        {
            return (null, $"mpicc failed: {FirstLine(error.Result)}");
        }
        File.Move(building, output, overwrite: true);
        return (output, null);
    }

    private static bool OnPath(string command) =>
        (Environment.GetEnvironmentVariable("PATH") ?? "").Split(':', StringSplitOptions.RemoveEmptyEntries)
            .Any(dir => File.Exists(Path.Combine(dir, command)));

    private static string FirstLine(string text) =>
        text.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries).FirstOrDefault() ?? "(no message)";
}
