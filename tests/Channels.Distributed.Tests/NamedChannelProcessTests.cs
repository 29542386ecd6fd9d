using System.Globalization;
using XCall.Cluster.Tests;
using Xunit.Abstractions;

namespace XCall.Channels.Distributed.Tests;

/// <summary>
/// tests/Channels.Distributed.TestApp as three real processes under <c>xcall run -n 3</c>, and the same program
/// unchanged in one process (stand-alone): every mode must print the same results either way.
/// </summary>
public sealed class NamedChannelProcessTests(ITestOutputHelper output)
{
    private static readonly TimeSpan s_hang = TimeSpan.FromSeconds(90);

    private async Task<string> RunAsync(bool standAlone, string mode)
    {
        string[] arguments = standAlone
            ? [TestPaths.TestApp, mode]
            : [TestPaths.XCall, "run", "-n", "3", "--", "dotnet", TestPaths.TestApp, mode];
        ProcessRun run = await ProcessRun.RunAsync("dotnet", arguments, s_hang);
        output.WriteLine(run.Output);
        Assert.Equal(0, run.ExitCode);
        Assert.Contains(standAlone ? "(stand-alone," : "(world,", run.Output, StringComparison.Ordinal);
        return run.Output;
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task Every_channel_kind_carries_values_between_named_ends(bool standAlone)
    {
        string text = await RunAsync(standAlone, "kinds");
        Assert.Contains("rank 0 o2o got 101", text, StringComparison.Ordinal);
        Assert.Contains("rank 0 a2o got from 1,from 2", text, StringComparison.Ordinal);
        Assert.Contains("rank 0 o2a wrote 2 jobs", text, StringComparison.Ordinal);
        string[] jobs = [.. System.Text.RegularExpressions.Regex.Matches(text, @"o2a got (job \d 'job \d')").Select(m => m.Groups[1].Value).Order(StringComparer.Ordinal)];
        Assert.Equal(["job 1 'job 1'", "job 2 'job 2'"], jobs);
        long[] any = [.. System.Text.RegularExpressions.Regex.Matches(text, @"a2a got (\d+)").Select(m => long.Parse(m.Groups[1].Value, CultureInfo.InvariantCulture)).Order()];
        Assert.Equal(2, any.Length);
        Assert.All(any, value => Assert.Contains(value, new long[] { 3001, 3002 }));
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task An_unbuffered_write_waits_for_the_read_in_the_other_process(bool standAlone)
    {
        string text = await RunAsync(standAlone, "rendezvous");
        Assert.Contains("rank 1 buffered write returned before any read", text, StringComparison.Ordinal);
        Assert.Contains("rank 0 write pending while unread: True", text, StringComparison.Ordinal);
        Assert.Contains("rank 0 read 5 and buffered 6", text, StringComparison.Ordinal);
        Assert.Contains("rank 1 unbuffered write returned after the read", text, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task Blocking_reads_take_remote_writes_in_order_and_then_poison(bool standAlone)
    {
        string text = await RunAsync(standAlone, "blockingread");
        Assert.Contains("rank 0 blocking reads: o2o 200 in order True, poisoned True; any2one 200+200 in writer order True, poisoned True", text, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task A_thread_reading_two_channels_in_turn_takes_remote_writes_made_to_both_at_once(bool standAlone)
    {
        string text = await RunAsync(standAlone, "crossed");
        Assert.Contains("rank 0 crossed reads: 300 rounds of a then b in order True", text, StringComparison.Ordinal);
        Assert.Contains("rank 1 crossed writes returned", text, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task FairSelect_alternates_over_remote_guards_and_an_output_guard_serves_remote_readers(bool standAlone)
    {
        string text = await RunAsync(standAlone, "select");
        Assert.Contains("rank 0 fair select alternated over 40 choices: True (20 + 20)", text, StringComparison.Ordinal);
        Assert.Contains("rank 0 with empty remote guards the select chose the timer", text, StringComparison.Ordinal);
        Assert.Contains("rank 0 the output guard chose 2 remote readers", text, StringComparison.Ordinal);
        Assert.Contains("rank 1 read 7 offered by an output guard", text, StringComparison.Ordinal);
        Assert.Contains("rank 2 read 7 offered by an output guard", text, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task Poison_crosses_processes_both_ways(bool standAlone)
    {
        string text = await RunAsync(standAlone, "poison");
        Assert.Contains("rank 0 saw poison 2 from rank 1", text, StringComparison.Ordinal);
        Assert.Contains("rank 1 saw poison 3 from rank 0", text, StringComparison.Ordinal);
        Assert.Contains("rank 2 saw poison 3 from rank 0", text, StringComparison.Ordinal);
        Assert.DoesNotContain("read past the poison", text, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task A_named_barrier_and_bucket_hold_processes_together(bool standAlone)
    {
        string text = await RunAsync(standAlone, "barrier");
        Assert.Contains("rank 0 barrier held 3 ranks for 3 rounds: True", text, StringComparison.Ordinal);
        Assert.Contains("rank 0 bucket released 2 ranks", text, StringComparison.Ordinal);
        Assert.Contains("rank 1 left the bucket", text, StringComparison.Ordinal);
        Assert.Contains("rank 2 left the bucket", text, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task Buffered_writes_keep_order_and_poison_completion_and_a_lone_write_follow_them(bool standAlone)
    {
        string text = await RunAsync(standAlone, "buffered");
        Assert.Contains("rank 0 buffered read 20000 values in order: True", text, StringComparison.Ordinal);
        Assert.Contains("rank 0 shared buffer got 10000 values from 2 writers, each writer's in order: True", text, StringComparison.Ordinal);
        Assert.Contains("rank 0 poisoned channel gave values in order: True, at least 92: True, then poison 4", text, StringComparison.Ordinal);
        Assert.Contains("rank 0 completed channel gave 100 values in order: True, then closed", text, StringComparison.Ordinal);
        Assert.Contains("rank 1 lone buffered write was read: 7", text, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task Remote_batches_reach_a_blocked_reader_in_order_beside_a_local_writer(bool standAlone)
    {
        string text = await RunAsync(standAlone, "batched");
        Assert.Contains("rank 0 batched buffer got 90000 values from 3 writers, each writer's in order: True", text, StringComparison.Ordinal);
    }

    [Fact]
    public async Task A_buffered_channel_reader_killed_with_sigkill_fails_the_writer()
    {
        string job = $"kb{Environment.ProcessId}-{Guid.NewGuid():N}"[..20];
        ProcessRun[] runs = await Task.WhenAll(Enumerable.Range(0, 2).Select(rank => ProcessRun.RunAsync("dotnet", [TestPaths.TestApp, "killbuffered"], s_hang, new Dictionary<string, string>
        {
            ["XCALL_RANK"] = rank.ToString(CultureInfo.InvariantCulture),
            ["XCALL_SIZE"] = "2",
            ["XCALL_JOB_ID"] = job,
        })));
        foreach (ProcessRun run in runs)
        {
            output.WriteLine(run.Output);
        }
        Assert.Equal(137, runs[1].ExitCode); // 128 + SIGKILL
        Assert.Contains("rank 1 read 100 values and kills itself with SIGKILL", runs[1].Output, StringComparison.Ordinal);
        Assert.Equal(0, runs[0].ExitCode);
        Assert.Matches(@"rank 0 buffered write failed after at least 100 values: True: RankFailedException rank 1: .*'b-victim'", runs[0].Output);
    }

    [Fact]
    public async Task A_reader_killed_with_sigkill_fails_the_pending_write_and_the_others_go_on()
    {
        // Started one by one: xcall run would end every rank once one dies.
        string job = $"kill{Environment.ProcessId}-{Guid.NewGuid():N}"[..20];
        ProcessRun[] runs = await Task.WhenAll(Enumerable.Range(0, 3).Select(rank => ProcessRun.RunAsync("dotnet", [TestPaths.TestApp, "kill"], s_hang, new Dictionary<string, string>
        {
            ["XCALL_RANK"] = rank.ToString(CultureInfo.InvariantCulture),
            ["XCALL_SIZE"] = "3",
            ["XCALL_JOB_ID"] = job,
        })));
        foreach (ProcessRun run in runs)
        {
            output.WriteLine(run.Output);
        }
        Assert.Equal(137, runs[1].ExitCode); // 128 + SIGKILL
        Assert.Contains("rank 1 kills itself with SIGKILL", runs[1].Output, StringComparison.Ordinal);
        Assert.Equal(0, runs[0].ExitCode);
        Assert.Matches(@"rank 0 write failed: RankFailedException rank 1: .*'victim'", runs[0].Output);
        Assert.Contains("rank 0 after the failure read 42 from rank 2", runs[0].Output, StringComparison.Ordinal);
        Assert.Equal(0, runs[2].ExitCode);
        Assert.Contains("rank 2 wrote 42 after the failure", runs[2].Output, StringComparison.Ordinal);
    }
}
