using XCall.Parallel.Host;
using XCall.Transport;

namespace XCall.Parallel.Tests;

/// <summary>
/// How a tunnel's batches carry one-way calls (short records after the first call to an object) and how its send
/// side is shared by caller threads (parked by the last caller thread, stolen by others and by the timer): every
/// call arrives, in each caller's order.
/// </summary>
public sealed class BatchRecordTests
{
    private static readonly TimeSpan s_hang = TimeSpan.FromSeconds(30);

    /// <summary>Rank 1's host with two recorders, and a tunnel from rank 0 whose batches go straight to it.</summary>
    private static (ParallelHost Host, Recorder First, ulong FirstId, Recorder Second, ulong SecondId, Tunnel Tunnel, List<byte[]> Sent) Wired(AggregationOptions aggregation)
    {
        var host = new ParallelHost(1, new ParallelTypes().Add<IRecorder>(() => new Recorder(1), Agglomeration.Never));
        var first = new Recorder(1);
        var second = new Recorder(1);
        ulong firstId = host.Add(first);
        ulong secondId = host.Add(second);
        var sent = new List<byte[]>();
        var channel = new BatchChannel("parallel://test", "the test", (sequence, frames) =>
        {
            lock (sent)
            {
                sent.Add(frames);
            }
            return host.ExchangeAsync(0, sequence, frames);
        }, aggregation, new ParallelMeasurements(), _ => { });
        return (host, first, firstId, second, secondId, new Tunnel(channel), sent);
    }

    [Fact]
    public void Consecutive_one_way_calls_to_one_object_travel_as_short_records_and_run_in_order()
    {
        (ParallelHost host, Recorder first, ulong firstId, _, _, Tunnel tunnel, List<byte[]> sent) = Wired(AggregationOptions.Default with { MaxDelay = TimeSpan.FromHours(1) });
        IRecorder recorder = tunnel.Connection.GetProxy<IRecorder>(firstId);
        for (int i = 0; i < 1000; i++)
        {
            recorder.Append(i);
        }
        tunnel.Channel.Flush();

        byte[] batch = Assert.Single(sent);
        ReadOnlySpan<byte> rest = batch;
        FrameHeader header = FrameRecords.Read(ref rest, out ReadOnlySpan<byte> payload);
        Assert.Equal(FrameKind.OneWay, header.Kind);
        // One full record, then 999 short ones of the same payload size.
        Assert.Equal(FrameRecords.Prefix + payload.Length + (999 * (FrameRecords.ShortPrefix + payload.Length)), batch.Length);
        Assert.Equal(Enumerable.Range(0, 1000), first.Values());
        tunnel.Dispose();
        host.Close();
    }

    [Fact]
    public void Calls_that_alternate_between_objects_and_methods_each_run_in_order_with_each_failure_reported()
    {
        (ParallelHost host, Recorder first, ulong firstId, Recorder second, ulong secondId, Tunnel tunnel, List<byte[]> sent) = Wired(AggregationOptions.Default with { MaxDelay = TimeSpan.FromHours(1) });
        var failures = new List<string>();
        IRecorder a = tunnel.Connection.GetProxy<IRecorder>(firstId);
        IRecorder b = tunnel.Connection.GetProxy<IRecorder>(secondId);
        for (int i = 0; i < 300; i++)
        {
            a.Append(i);
            a.Append(-i);
            b.Append(i);
            if (i % 100 == 0)
            {
                a.Fail($"a{i}"); // another method of the same object: a short record with its own method id
            }
        }
        OneWayCallFailedException failed = Assert.Throws<OneWayCallFailedException>(() => a.Count());
        Assert.Equal("a0", failed.RemoteMessage); // the first failure of the object, reported once

        Assert.Equal(Enumerable.Range(0, 300).SelectMany(i => new[] { i, -i }), first.Values());
        Assert.Equal(Enumerable.Range(0, 300), second.Values());
        Assert.Equal(300, b.Count());
        Assert.True(sent.Count >= 2);
        tunnel.Dispose();
        host.Close();
    }

    /// <summary>Appends <paramref name="values"/> to the first recorder and flushes: the one batch sent (which ran), and
    /// what follows its first record, the first call's full one.</summary>
    private static (ParallelHost Host, Recorder First, Tunnel Tunnel, byte[] Batch, int Second) OneBatch(params int[] values)
    {
        (ParallelHost host, Recorder first, ulong firstId, _, _, Tunnel tunnel, List<byte[]> sent) = Wired(AggregationOptions.Default with { MaxDelay = TimeSpan.FromHours(1) });
        IRecorder recorder = tunnel.Connection.GetProxy<IRecorder>(firstId);
        foreach (int value in values)
        {
            recorder.Append(value);
        }
        tunnel.Channel.Flush();
        byte[] batch = Assert.Single(sent);
        ReadOnlySpan<byte> rest = batch;
        FrameRecords.Read(ref rest, out _);
        return (host, first, tunnel, batch, batch.Length - rest.Length);
    }

    [Fact]
    public async Task A_batch_that_starts_with_a_short_record_fails_alone_and_runs_nothing()
    {
        (ParallelHost host, Recorder first, Tunnel tunnel, byte[] batch, int second) = OneBatch(1, 2);
        byte[] headless = batch[second..]; // the second call's short record alone, with no call before it

        XCallProtocolException error = await Assert.ThrowsAsync<XCallProtocolException>(() => host.ExchangeAsync(0, 1, headless).WaitAsync(s_hang));
        Assert.Contains("short record", error.Message, StringComparison.Ordinal);
        Assert.Equal([1, 2], first.Values());
        tunnel.Dispose();
        host.Close();
    }

    [Fact]
    public async Task A_short_record_that_claims_more_than_its_batch_holds_fails_the_batch_and_runs_none_of_it()
    {
        (ParallelHost host, Recorder first, Tunnel tunnel, byte[] batch, int second) = OneBatch(1, 2, 3);
        ReadOnlySpan<byte> rest = batch.AsSpan(second); // the second call's short record, and the third's
        Assert.True(FrameRecords.TryReadShort(rest, out uint methodId, out int payloadLength));
        Assert.Equal(FrameRecords.Read(ref rest, default(FrameHeader) with { Kind = FrameKind.OneWay }, out ReadOnlySpan<byte> payload).MethodId, methodId);
        Assert.Equal(payload.Length, payloadLength);
        // Cut inside the third call's payload: its short record now claims bytes the batch does not hold.
        byte[] cut = batch[..^1];
        Assert.False(FrameRecords.TryReadShort(cut.AsSpan(second + FrameRecords.ShortPrefix + payloadLength), out _, out _));

        XCallProtocolException error = await Assert.ThrowsAsync<XCallProtocolException>(() => host.ExchangeAsync(0, 1, cut).WaitAsync(s_hang));
        Assert.Contains($"claims {payloadLength} bytes of payload; {payloadLength - 1} are left", error.Message, StringComparison.Ordinal);
        Assert.Equal([1, 2, 3], first.Values()); // the batch as sent ran; the cut copy ran none of its calls
        tunnel.Dispose();
        host.Close();
    }

    [Fact]
    public void Caller_threads_that_take_turns_on_one_tunnel_lose_no_call_and_keep_their_order()
    {
        (ParallelHost host, Recorder first, ulong firstId, _, _, Tunnel tunnel, _) = Wired(AggregationOptions.Default with { MaxDelay = TimeSpan.FromHours(1) });
        IRecorder recorder = tunnel.Connection.GetProxy<IRecorder>(firstId);
        // Each turn a thread parks the send side after its calls; the next thread's first call steals it. More turns
        // than a tunnel allows steals, so the later turns take the side with a compare-and-swap.
        const int Turns = 40;
        var expected = new List<int>();
        for (int t = 0; t < Turns; t++)
        {
            int start = t * 100;
            var thread = new Thread(() =>
            {
                for (int i = start; i < start + 100; i++)
                {
                    recorder.Append(i);
                }
            });
            thread.Start();
            Assert.True(thread.Join(s_hang));
            expected.AddRange(Enumerable.Range(start, 100));
        }
        Assert.Equal(Turns * 100, recorder.Count());
        Assert.Equal(expected, first.Values());
        tunnel.Dispose();
        host.Close();
    }

    [Fact]
    public void Caller_threads_calling_at_once_on_one_tunnel_lose_no_call_and_keep_their_order()
    {
        (ParallelHost host, Recorder first, ulong firstId, _, _, Tunnel tunnel, _) = Wired(AggregationOptions.Default with { MaxCalls = 64, MaxDelay = TimeSpan.FromMilliseconds(1) });
        IRecorder recorder = tunnel.Connection.GetProxy<IRecorder>(firstId);
        const int Threads = 3;
        const int Calls = 50_000;
        Thread[] threads = [.. Enumerable.Range(0, Threads).Select(t => new Thread(() =>
        {
            for (int i = 0; i < Calls; i++)
            {
                recorder.Append((i * Threads) + t); // thread t's values are t mod Threads, rising
            }
        }))];
        foreach (Thread thread in threads)
        {
            thread.Start();
        }
        foreach (Thread thread in threads)
        {
            Assert.True(thread.Join(s_hang));
        }

        Assert.Equal(Threads * Calls, recorder.Count());
        int[] values = first.Values();
        for (int t = 0; t < Threads; t++)
        {
            Assert.Equal(Enumerable.Range(0, Calls).Select(i => (i * Threads) + t), values.Where(v => v % Threads == t));
        }
        tunnel.Dispose();
        host.Close();
    }
}
