using XCall.Parallel.Host;
using XCall.Transport;

namespace XCall.Parallel.Tests;

/// <summary>
/// A host running batches a caller's tunnel wrote: runs of aggregated one-way calls are dispatched in one loop
/// (<see cref="ObjectRunner.DispatchRest"/>), with every call run in order and every failure reported as its own.
/// </summary>
public sealed class HostRunTests
{
    private static readonly BatchResult s_nothing = new([], [], [], [], []);

    /// <summary>
    /// The batches a tunnel sends for the calls <paramref name="calls"/> makes on a proxy of object
    /// <paramref name="objectId"/>; with <paramref name="failSecond"/> the second batch's send fails, which closes the tunnel.
    /// </summary>
    private static List<byte[]> Capture(ulong objectId, Action<IRecorder> calls, bool failSecond = false)
    {
        var sent = new List<byte[]>();
        var channel = new BatchChannel("parallel://test", "the test", (_, frames) =>
        {
            sent.Add(frames);
            return failSecond && sent.Count == 2 ? Task.FromException<BatchResult>(new InvalidOperationException("not sent")) : Task.FromResult(s_nothing);
        }, AggregationOptions.Default with { MaxDelay = TimeSpan.FromHours(1) }, new ParallelMeasurements(), _ => { });
        using var tunnel = new Tunnel(channel);
        calls(tunnel.Connection.GetProxy<IRecorder>(objectId));
        if (!failSecond)
        {
            channel.Flush();
        }
        return sent;
    }

    /// <summary>Rank 1's host with one recorder.</summary>
    private static (ParallelHost Host, Recorder Target, ulong Id) Host()
    {
        var host = new ParallelHost(1, new ParallelTypes().Add<IRecorder>(() => new Recorder(1), Agglomeration.Never));
        var target = new Recorder(1);
        return (host, target, host.Add(target));
    }

    [Fact]
    public async Task A_run_of_one_way_calls_runs_each_in_order_and_reports_each_failure_as_its_own()
    {
        (ParallelHost host, Recorder target, ulong id) = Host();
        List<byte[]> batches = Capture(id, recorder =>
        {
            recorder.Fail("first"); // the first call of a run fails
            for (int i = 0; i < 10; i++)
            {
                recorder.Append(i);
            }
            recorder.Fail("middle");
            recorder.Fail("next"); // two in a row
            for (int i = 10; i < 2000; i++)
            {
                recorder.Append(i);
            }
            recorder.Fail("last");
        });
        byte[] batch = Assert.Single(batches);

        BatchResult result = await host.ExchangeAsync(0, 0, batch).WaitAsync(TimeSpan.FromSeconds(30));

        Assert.Equal(Enumerable.Range(0, 2000), target.Values());
        Assert.Equal(["first", "middle", "next", "last"], result.Failures.Select(f => f.Message));
        Assert.All(result.Failures, f => Assert.Equal(id, f.ObjectId));
        Assert.All(result.Failures, f => Assert.Contains("Fail", f.Method, StringComparison.Ordinal));
        Assert.Equal(2004, result.Calls.Sum());
        host.Close();
    }

    [Fact]
    public async Task A_one_way_frame_for_a_method_that_replies_fails_the_batch_inside_a_run_after_the_calls_before_it()
    {
        (ParallelHost host, Recorder target, ulong id) = Host();
        // Two one-way calls, then a call that expects a reply (its batch sent alone; that send fails, so the call does not wait).
        List<byte[]> batches = Capture(id, recorder =>
        {
            recorder.Append(1);
            recorder.Append(2);
            Assert.ThrowsAny<XCallException>(() => recorder.Count());
        }, failSecond: true);
        Assert.Equal(2, batches.Count);
        // The call's frame, marked one-way, at the end of the run of one-way calls: the peer breaks the contract.
        ReadOnlySpan<byte> call = batches[1];
        FrameHeader header = FrameRecords.Read(ref call, out ReadOnlySpan<byte> payload);
        Assert.Equal(FrameKind.Call, header.Kind);
        byte[] forged = new byte[batches[0].Length + FrameRecords.Prefix + payload.Length];
        batches[0].CopyTo(forged, 0);
        FrameRecords.WritePrefix(forged.AsSpan(batches[0].Length), header with { Kind = FrameKind.OneWay }, payload.Length);
        payload.CopyTo(forged.AsSpan(batches[0].Length + FrameRecords.Prefix));

        await Assert.ThrowsAsync<XCallProtocolException>(() => host.ExchangeAsync(0, 0, forged).WaitAsync(TimeSpan.FromSeconds(30)));
        Assert.Equal([1, 2], target.Values());
        host.Close();
    }
}
