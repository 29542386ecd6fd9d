using System.Runtime.InteropServices;
using XCall.Marshal;
using XCall.Transport.Shm.Lending;
using XCall.Transport.Shm.Tests.Support;

namespace XCall.Transport.Shm.Tests;

/// <summary>
/// Cross-memory attach (<see cref="ShmOptions.CrossMemoryAttach"/>): which connections lend, which frames lend,
/// how long a loan lasts, and what a read of a loan taken back does.
/// </summary>
public sealed class LendingTests : IDisposable
{
    private readonly TestDirectory _dir = new();

    public void Dispose() => _dir.Dispose();

    private async Task<(ShmChannel Client, ShmChannel Server)> PairAsync(string name, ShmOptions server, ShmOptions client)
    {
        using ShmListener listener = ShmTransport.Listen(name, server);
        ValueTask<FrameChannel> accept = listener.AcceptAsync();
        FrameChannel c = await ShmTransport.ConnectAsync(name, client);
        return ((ShmChannel)c, (ShmChannel)await accept);
    }

    [Theory]
    [InlineData(true, true)]
    [InlineData(false, true)]
    [InlineData(true, false)]
    public async Task The_handshake_turns_lending_on_both_ways_only_when_both_sides_allow_it(bool serverAllows, bool clientAllows)
    {
        (ShmChannel client, ShmChannel server) = await PairAsync(
            "terms",
            _dir.Options() with { CrossMemoryAttach = serverAllows },
            _dir.Options() with { CrossMemoryAttach = clientAllows });
        using (client)
        using (server)
        {
            // Same user, and this machine lets a process read its own user's processes (the probe proves it).
            bool on = serverAllows && clientAllows;
            Assert.Equal(on, client.LendsToPeer);
            Assert.Equal(on, client.ReadsPeerMemory);
            Assert.Equal(on, server.LendsToPeer);
            Assert.Equal(on, server.ReadsPeerMemory);
        }
    }

    [Fact]
    public async Task A_waiting_call_lends_its_large_array_until_its_reply_and_other_frames_copy_theirs()
    {
        (ShmChannel client, ShmChannel server) = await PairAsync("loans", _dir.Options(), _dir.Options());
        byte[] data = new byte[1 << 20];
        new Random(11).NextBytes(data);
        var replies = new RecordingHandler();
        var arrays = new ArrayHandler(server);
        using (client)
        using (server)
        {
            server.Start(arrays);
            client.Start(replies);

            Send(client, new FrameHeader(FrameKind.Call, 1, 0, 0, FrameFlags.CallerWaits), data);
            Assert.Equal(data.Length, client.LentBytes);
            Assert.True(client.HoldsLoans, "the loan lasts until the reply");
            arrays.Release.Release(); // the server reads the array and answers
            await arrays.Answered.Task.WaitAsync(TimeSpan.FromSeconds(30));
            Assert.Equal(data, arrays.Received.Take());
            await WaitUntil(() => replies.Frames.Count == 1);
            Assert.False(client.HoldsLoans, "the reply ended the loan");

            // An async call (the caller does not wait) and a one-way call copy the array into the ring.
            arrays.Release.Release(2);
            Send(client, new FrameHeader(FrameKind.Call, 2, 0, 0), data);
            Send(client, new FrameHeader(FrameKind.OneWay, 0, 0, 0), data);
            Assert.Equal(data, arrays.Received.Take());
            Assert.Equal(data, arrays.Received.Take());
            Assert.Equal(data.Length, client.LentBytes);
        }
    }

    [Fact]
    public unsafe void A_loan_taken_back_cannot_be_read_and_its_slot_serves_a_new_generation()
    {
        using ShmSegment segment = ShmSegment.Create("lending-unit", 4096, out Microsoft.Win32.SafeHandles.SafeFileHandle memory);
        memory.Dispose();
        int self = Environment.ProcessId;
        var book = new LoanBook(segment, segment.LoanSlots(clientToServer: true), self, 4096, "shm://unit");
        var reader = new PeerReader(segment, segment.LoanSlots(clientToServer: true), self, "shm://unit", int.MaxValue);
        int[] values = [.. Enumerable.Range(0, 10_000)];
        byte[] copy = new byte[values.Length * sizeof(int)];

        Assert.True(book.TryLend(values, copy.Length, out ulong address, out ulong ticket));
        book.Seal(callId: 5);
        reader.Read(address, ticket, copy);
        reader.Read(address, ticket, copy); // a block may be read more than once while lent
        Assert.Equal(values, MemoryMarshal.Cast<byte, int>(copy).ToArray());

        book.Revoke(5); // the caller stopped waiting
        var gone = Assert.Throws<XCallDisconnectedException>(() => reader.Read(address, ticket, copy));
        Assert.Contains("took back", gone.Message);

        // The slot serves the next call under a new generation; the old ticket stays dead.
        Assert.True(book.TryLend(values, copy.Length, out ulong again, out ulong newTicket));
        book.Seal(callId: 6);
        Assert.NotEqual(ticket, newTicket);
        Assert.Throws<XCallDisconnectedException>(() => reader.Read(again, ticket, copy));
        reader.Read(again, newTicket, copy);

        // A bad address fails the read and leaves the loan as it was: the reply still ends it.
        var bad = Assert.Throws<XCallProtocolException>(() => reader.Read(8, newTicket, copy));
        Assert.Contains("Cannot read", bad.Message);
        book.Release(6);
        Assert.False(book.HasSealed);
        Assert.Throws<XCallProtocolException>(() => reader.Read(again, ulong.MaxValue, copy)); // no such slot
    }

    [Fact]
    public void Calls_past_the_slots_copy_their_arrays_and_the_end_of_the_connection_takes_every_loan_back()
    {
        using ShmSegment segment = ShmSegment.Create("lending-slots", 4096, out Microsoft.Win32.SafeHandles.SafeFileHandle memory);
        memory.Dispose();
        var book = NewBook(segment);
        byte[] data = new byte[8192];
        for (ulong call = 1; call <= 64; call++)
        {
            Assert.True(book.TryLend(data, data.Length, out _, out _));
            book.Seal(call);
        }
        Assert.False(book.TryLend(data, data.Length, out _, out _), "65 calls with loans out at once");
        book.RevokeAll();
        Assert.False(book.HasSealed);
        Assert.False(book.TryLend(data, data.Length, out _, out _), "a connection that ended lends nothing more");
    }

    private static unsafe LoanBook NewBook(ShmSegment segment) => new(segment, segment.LoanSlots(clientToServer: true), Environment.ProcessId, 4096, "shm://unit");

    private static void Send(ShmChannel channel, in FrameHeader header, byte[] data)
    {
        var writer = new MarshalWriter(channel.BeginFrame(header));
        writer.WriteArray(data);
        writer.Flush();
        channel.CommitFrame();
    }

    private static async Task WaitUntil(Func<bool> condition)
    {
        // Polls a condition the channel's receive thread sets; bounded so a failure shows instead of hanging.
        var clock = System.Diagnostics.Stopwatch.StartNew();
        while (!condition())
        {
            Assert.True(clock.Elapsed < TimeSpan.FromSeconds(30), "the condition did not come true within 30 s");
            await Task.Yield();
        }
    }

    /// <summary>Reads each frame's array once released to, and answers calls that wait.</summary>
    private sealed class ArrayHandler(ShmChannel channel) : IFrameHandler
    {
        public SemaphoreSlim Release { get; } = new(0);

        public System.Collections.Concurrent.BlockingCollection<byte[]> Received { get; } = [];

        public TaskCompletionSource Answered { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public MarshalLimits Limits => MarshalLimits.Default;

        public void OnFrame(in FrameHeader header, ref MarshalReader payload)
        {
            Release.Wait();
            Received.Add(payload.ReadArray<byte>()!);
            if (header.Kind == FrameKind.Call && header.CallId == 1)
            {
                channel.BeginFrame(new FrameHeader(FrameKind.Reply, header.CallId, 0, 0));
                channel.CommitFrame();
                Answered.TrySetResult();
            }
        }

        public void OnClosed(Exception? error)
        {
        }
    }
}
