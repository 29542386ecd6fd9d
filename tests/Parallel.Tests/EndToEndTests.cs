using System.Diagnostics;
using System.Reflection;
using System.Text;
using Xunit.Abstractions;

namespace XCall.Parallel.Tests;

/// <summary>The test program (tests/Parallel.TestApp) as real rank processes.</summary>
public sealed class EndToEndTests(ITestOutputHelper output)
{
    private static readonly TimeSpan s_hang = TimeSpan.FromSeconds(90);

    private static readonly string s_testApp = Metadata("TestAppPath");

    private static readonly string s_rayFarm = Metadata("RayFarmPath");

    private static string Metadata(string key) => Path.GetFullPath(typeof(EndToEndTests).Assembly
        .GetCustomAttributes<AssemblyMetadataAttribute>().Single(a => a.Key == key).Value!);

    [Fact]
    public async Task Workers_in_three_processes_get_every_call_in_order_and_report_one_way_failures()
    {
        string[] outputs = await RunRanksAsync(3, "objects");
        string rank0 = outputs[0];
        for (int worker = 0; worker < 3; worker++)
        {
            int host = (worker + 1) % 3;
            Assert.Contains($"worker {worker} on rank {host} ({host}) counted 100000 in order", rank0, StringComparison.Ordinal);
            Assert.Contains(host == 0 ? $"worker {worker}: InvalidOperationException: boom" : $"worker {worker}: OneWayCallFailedException: The one-way call Fail",
                rank0, StringComparison.Ordinal);
        }
        Assert.Contains("threw System.InvalidOperationException: boom", rank0, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_call_on_a_worker_killed_with_sigkill_fails_naming_its_rank()
    {
        string[] outputs = await RunRanksAsync(3, "kill", allowFailure: 2);
        Assert.Contains("victim on rank 2", outputs[0], StringComparison.Ordinal);
        Assert.Contains("call on the dead worker: XCallDisconnectedException:", outputs[0], StringComparison.Ordinal);
        Assert.Contains("rank 2", outputs[0][outputs[0].IndexOf("call on the dead worker", StringComparison.Ordinal)..], StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_grain_probe_agglomerates_a_fine_type_and_leaves_a_coarse_one_on_its_rank_before_any_call()
    {
        // Both contracts are placed on the other rank; nothing was called before either creation: the probes decide.
        string[] outputs = await RunRanksAsync(2, "probe");
        Assert.Matches(@"fine: local True, rank 0, counted 1000 in order; .*ProbeNanoseconds = \d", outputs[0]);
        Assert.Matches(@"coarse: local False, rank 1, spun 1; .*ProbeNanoseconds = \d", outputs[0]);
    }

    [Fact]
    public async Task Measured_calls_agglomerate_a_fine_type_and_leave_a_coarse_one_on_its_rank()
    {
        // Without probes the first object of each type goes to the other rank; its calls measured there decide the next.
        string[] outputs = await RunRanksAsync(2, "measured");
        Assert.Contains("first: local False, False; counted 20000, spun 1500", outputs[0], StringComparison.Ordinal);
        Assert.Matches(@"fine: local True, rank 0; .*Calls = 2000\d, .*ProbeNanoseconds = ,", outputs[0]);
        Assert.Matches(@"coarse: local False, rank 1; .*Calls = 150\d, ", outputs[0]);
    }

    [Fact]
    public async Task The_ray_tracer_farm_on_three_ranks_renders_the_image_a_single_process_renders()
    {
        // The farm deals lines out to workers on ranks 1 and 2; the reference renders every line in one process.
        string[] outputs = await RunRanksAsync(3, "--lines", app: s_rayFarm, extra: "7");
        (int code, string local) = await RunAsync("--local", 0, 1, "local", s_rayFarm);
        Assert.Equal(0, code);
        output.WriteLine(local);
        Assert.Contains("by 2 workers on ranks 1,2", outputs[0], StringComparison.Ordinal);
        string farm = ChecksumOf(outputs[0]);
        Assert.Equal(ChecksumOf(local), farm);
        Assert.NotEqual(Convert.ToHexString(System.Security.Cryptography.SHA256.HashData(new byte[500 * 500 * 3])), farm); // not a blank image
    }

    private static string ChecksumOf(string text) =>
        System.Text.RegularExpressions.Regex.Match(text, "checksum ([0-9A-F]{64})") is { Success: true } m
            ? m.Groups[1].Value
            : throw new Xunit.Sdk.XunitException($"no checksum in:\n{text}");

    /// <summary>Starts <paramref name="size"/> ranks of the test program (as a launcher would, by environment); every rank but <paramref name="allowFailure"/> must exit with 0.</summary>
    private async Task<string[]> RunRanksAsync(int size, string mode, int allowFailure = -1, string? app = null, string? extra = null)
    {
        string job = $"pe{Environment.ProcessId}-{Guid.NewGuid():N}"[..20];
        (int Code, string Text)[] runs = await Task.WhenAll(Enumerable.Range(0, size).Select(rank => RunAsync(mode, rank, size, job, app ?? s_testApp, extra)));
        for (int rank = 0; rank < size; rank++)
        {
            output.WriteLine($"--- rank {rank} exited with {runs[rank].Code}\n{runs[rank].Text}");
        }
        for (int rank = 0; rank < size; rank++)
        {
            if (rank == allowFailure)
            {
                Assert.Equal(137, runs[rank].Code); // SIGKILL
            }
            else
            {
                Assert.True(runs[rank].Code == 0, $"rank {rank} exited with {runs[rank].Code}:\n{runs[rank].Text}");
            }
        }
        return [.. runs.Select(r => r.Text)];
    }

    private static async Task<(int Code, string Text)> RunAsync(string mode, int rank, int size, string job, string app, string? extra = null)
    {
        var start = new ProcessStartInfo("dotnet") { RedirectStandardOutput = true, RedirectStandardError = true, UseShellExecute = false };
        start.ArgumentList.Add(app);
        start.ArgumentList.Add(mode);
        if (extra is not null)
        {
            start.ArgumentList.Add(extra);
        }
        start.Environment["XCALL_RANK"] = rank.ToString(System.Globalization.CultureInfo.InvariantCulture);
        start.Environment["XCALL_SIZE"] = size.ToString(System.Globalization.CultureInfo.InvariantCulture);
        start.Environment["XCALL_JOB_ID"] = job;
        using var process = Process.Start(start)!;
        Task<string> stdout = process.StandardOutput.ReadToEndAsync();
        Task<string> stderr = process.StandardError.ReadToEndAsync();
        using var timeout = new CancellationTokenSource(s_hang);
        try
        {
            await process.WaitForExitAsync(timeout.Token);
        }
        catch (OperationCanceledException)
        {
            process.Kill(entireProcessTree: true);
            throw new TimeoutException($"rank {rank} ({mode}) did not end within {s_hang}:\n{await stdout}{await stderr}");
        }
        var text = new StringBuilder(await stdout).Append(await stderr);
        return (process.ExitCode, text.ToString());
    }
}
