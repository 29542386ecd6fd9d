using System.Buffers;
using System.Runtime.InteropServices;

namespace XCall.Marshal.Tests;

/// <summary>
/// Lent arrays (<see cref="IBlockLender"/>, <see cref="IPeerMemory"/>): a large array written to a lending buffer
/// writer crosses as a count and an address, and the reader copies it out of the peer's memory; anything else
/// about a lent block is malformed input.
/// </summary>
public sealed class LentArrayTests
{
    [Fact]
    public void An_array_at_the_lenders_minimum_crosses_as_an_address_and_reads_back_equal()
    {
        long[] values = [.. Enumerable.Range(0, 1024).Select(i => (long)i * 1_000_003)];
        var lender = new FakeLender(minimum: 8192);
        var writer = new MarshalWriter(lender);
        writer.Write(7);
        writer.WriteArray(values);
        writer.Write(9);
        writer.Flush();

        Assert.Single(lender.Lent);
        Assert.Equal(4 + 4 + 4 + 8 + 8 + 4, lender.WrittenCount); // 7, marker, count, address, ticket, 9: not the 8 KiB
        var reader = new MarshalReader(lender.Written) { PeerMemory = lender };
        Assert.Equal(7, reader.Read<int>());
        Assert.Equal(values, reader.ReadArray<long>());
        Assert.Equal(9, reader.Read<int>());
        reader.EnsureFullyConsumed();
    }

    [Fact]
    public void An_array_below_the_minimum_a_null_array_and_a_span_are_copied_into_the_message()
    {
        var lender = new FakeLender(minimum: 8192);
        var writer = new MarshalWriter(lender);
        writer.WriteArray(new long[1023]); // 8184 bytes
        writer.WriteArray<long>(null);
        writer.WriteSpan<long>(new long[2048]);
        writer.Flush();

        Assert.Empty(lender.Lent);
        var reader = new MarshalReader(lender.Written);
        Assert.Equal(1023, reader.ReadArray<long>()!.Length);
        Assert.Null(reader.ReadArray<long>());
        long[]? rented = null;
        Assert.Equal(2048, reader.ReadSpanInPlace(ref rented).Length);
        reader.EnsureFullyConsumed();
    }

    [Fact]
    public void A_lender_that_refuses_the_message_gets_the_bytes_copied()
    {
        var lender = new FakeLender(minimum: 4096) { Refuse = true };
        var writer = new MarshalWriter(lender);
        byte[] data = [.. Enumerable.Range(0, 10_000).Select(i => (byte)i)];
        writer.WriteArray(data);
        writer.Flush();

        Assert.Equal(4 + data.Length, lender.WrittenCount);
        Assert.Equal(data, new MarshalReader(lender.Written).ReadArray<byte>());
    }

    [Fact]
    public void A_lent_array_read_as_a_span_parameter_lands_in_a_rented_array()
    {
        int[] values = [.. Enumerable.Range(0, 5000)];
        var lender = new FakeLender(minimum: 4096);
        var writer = new MarshalWriter(lender);
        writer.WriteArray(values);
        writer.Flush();

        var reader = new MarshalReader(lender.Written) { PeerMemory = lender };
        int[]? rented = null;
        ReadOnlySpan<int> span = reader.ReadSpanInPlace(ref rented);
        Assert.NotNull(rented);
        Assert.Equal(values, span.ToArray());
        ArrayPool<int>.Shared.Return(rented);
    }

    [Fact]
    public void A_lent_array_where_the_transport_lends_nothing_is_a_protocol_error()
    {
        byte[] message = Lent(count: 100, address: 0x1000);
        var ex = Assert.Throws<XCallProtocolException>(() => new MarshalReader(message).ReadArray<byte>());
        Assert.Contains("lends nothing", ex.Message);
    }

    [Theory]
    [InlineData(0)]
    [InlineData(-5)]
    [InlineData(int.MaxValue)]
    public void A_lent_count_outside_the_limits_is_refused_before_anything_is_allocated_or_read(int count)
    {
        byte[] message = Lent(count, address: 0x1000);
        var peer = new FakeLender(minimum: 1);
        var ex = Assert.Throws<XCallProtocolException>(() => new MarshalReader(message, new MarshalLimits { MaxBlockBytes = 1 << 20 }) { PeerMemory = peer }.ReadArray<int>());
        Assert.Contains("lent array length", ex.Message);
        Assert.Equal(0, peer.Reads);
    }

    [Fact]
    public void A_lent_array_larger_than_the_transport_takes_is_refused_before_anything_is_allocated_or_read()
    {
        byte[] message = Lent(count: 5000, address: 0x1000);
        var peer = new FakeLender(minimum: 1) { MaxBlockBytes = 4096 };
        var ex = Assert.Throws<XCallProtocolException>(() => new MarshalReader(message) { PeerMemory = peer }.ReadArray<byte>());
        Assert.Contains("allowed 0..4096", ex.Message);
        Assert.Equal(0, peer.Reads);
    }

    [Fact]
    public void A_lent_span_of_an_array_slice_stays_in_the_peer_until_the_callee_copies_it()
    {
        int[] values = [.. Enumerable.Range(0, 10_000)];
        var lender = new FakeLender(minimum: 4096);
        var writer = new MarshalWriter(lender);
        writer.WriteLent(new LentSpan<int>(values, 10, 5000));
        writer.Flush();

        Assert.Single(lender.Lent);
        var reader = new MarshalReader(lender.Written) { PeerMemory = lender };
        int[]? rented = null;
        LentSpan<int> block = reader.ReadLent(ref rented);
        reader.EnsureFullyConsumed();
        Assert.Null(rented);
        Assert.True(block.IsInPeer);
        Assert.Equal(5000, block.Length);
        Assert.Equal(0, lender.Reads); // nothing copied before the callee asks

        int[] destination = new int[5001];
        block.CopyTo(destination);
        Assert.Equal(values.AsSpan(10, 5000).ToArray(), destination.AsSpan(0, 5000).ToArray());
        Assert.Equal(1, lender.Reads);
        try
        {
            block.CopyTo(new int[4999]);
            Assert.Fail("a destination too short was accepted");
        }
        catch (ArgumentException e)
        {
            Assert.Contains("4999", e.Message);
        }
    }

    [Fact]
    public void A_lent_span_that_is_not_an_array_or_is_small_travels_in_the_message_and_reads_in_place()
    {
        var lender = new FakeLender(minimum: 4096);
        var writer = new MarshalWriter(lender);
        Span<int> stack = stackalloc int[2000]; // 8000 bytes, but no array to pin
        stack.Fill(7);
        writer.WriteLent<int>(stack);
        writer.WriteLent<int>(new int[10]);
        writer.Flush();

        Assert.Empty(lender.Lent);
        var reader = new MarshalReader(lender.Written);
        int[]? rented = null;
        LentSpan<int> first = reader.ReadLent(ref rented);
        Assert.False(first.IsInPeer);
        Assert.True(first.TryGetSpan(out ReadOnlySpan<int> inPlace));
        Assert.True(MemoryMarshal.AsBytes(inPlace).Overlaps(lender.Written), "read in place");
        Assert.Equal(stack.ToArray(), first.ToArray());
        Assert.Equal(10, reader.ReadLent(ref rented).Length);
        reader.EnsureFullyConsumed();
    }

    [Fact]
    public void A_lent_span_received_from_a_peer_and_passed_on_carries_its_values()
    {
        byte[] data = [.. Enumerable.Range(0, 20_000).Select(i => (byte)(i * 7))];
        var first = new FakeLender(minimum: 4096);
        var writer = new MarshalWriter(first);
        writer.WriteLent<byte>(data);
        writer.Flush();
        var reader = new MarshalReader(first.Written) { PeerMemory = first };
        byte[]? rented = null;
        LentSpan<byte> received = reader.ReadLent(ref rented);

        var next = new FakeLender(minimum: 4096);
        var forward = new MarshalWriter(next);
        forward.WriteLent(received);
        forward.Flush();
        Assert.Empty(next.Lent); // not an array of this process: its values go in the message
        Assert.Equal(data, new MarshalReader(next.Written).ReadArray<byte>());
    }

    private static byte[] Lent(int count, ulong address) => Wire.Encode((ref MarshalWriter w) =>
    {
        w.Write(WireFormat.LentLength);
        w.Write(count);
        w.Write(address);
        w.Write(77UL);
    });

    /// <summary>A buffer writer that lends by pinning, and serves the lent bytes back as the peer's memory.</summary>
    private sealed unsafe class FakeLender(int minimum) : IBlockLender, IPeerMemory, IBufferWriter<byte>
    {
        private readonly ArrayBufferWriter<byte> _buffer = new();

        public List<GCHandle> Lent { get; } = [];

        public bool Refuse { get; init; }

        public int Reads { get; private set; }

        public ReadOnlySpan<byte> Written => _buffer.WrittenSpan;

        public int WrittenCount => _buffer.WrittenCount;

        public int MinimumLendBytes => minimum;

        public long MaxBlockBytes { get; init; } = long.MaxValue;

        public bool TryLend(Array array, long byteLength, out ulong address, out ulong ticket)
        {
            address = 0;
            ticket = 77;
            if (Refuse)
            {
                return false;
            }
            GCHandle handle = GCHandle.Alloc(array, GCHandleType.Pinned);
            Lent.Add(handle);
            address = (ulong)handle.AddrOfPinnedObject();
            return true;
        }

        public void Read(ulong address, ulong ticket, Span<byte> destination)
        {
            Assert.Equal(77UL, ticket);
            Reads++;
            new ReadOnlySpan<byte>((void*)address, destination.Length).CopyTo(destination);
        }

        public void Advance(int count) => _buffer.Advance(count);

        public Memory<byte> GetMemory(int sizeHint = 0) => _buffer.GetMemory(sizeHint);

        public Span<byte> GetSpan(int sizeHint = 0) => _buffer.GetSpan(sizeHint);
    }
}
