using System.Runtime.InteropServices;

namespace XCall.Marshal.Tests;

/// <summary><see cref="MarshalReader.ReadSpanInPlace{T}"/>: a view of the message when the values lie there
/// contiguous and aligned, a rented copy otherwise, the same values either way.</summary>
public sealed class SpanInPlaceTests
{
    private static readonly int[] s_values = [.. Enumerable.Range(0, 1000).Select(i => i * 7919 - 500_000)];

    [Fact]
    public void Values_contiguous_in_the_message_are_read_in_place_without_a_copy()
    {
        byte[] message = Wire.Encode((ref MarshalWriter w) =>
        {
            w.Write(42L);
            w.WriteSpan<int>(s_values);
            w.Write(7L);
        });
        var reader = new MarshalReader(message);
        Assert.Equal(42L, reader.Read<long>());
        int[]? rented = null;
        ReadOnlySpan<int> span = reader.ReadSpanInPlace(ref rented);

        Assert.Null(rented);
        Assert.True(MemoryMarshal.AsBytes(span).Overlaps(message), "the span is a view of the message");
        Assert.Equal(s_values, span.ToArray());
        Assert.Equal(7L, reader.Read<long>());
        reader.EnsureFullyConsumed();
    }

    [Fact]
    public void Misaligned_values_are_copied_into_a_rented_array()
    {
        byte[] message = Wire.Encode((ref MarshalWriter w) =>
        {
            w.WriteByte(1); // the length at offset 1, the values at 5: not aligned for int
            w.WriteSpan<int>(s_values);
        });
        var reader = new MarshalReader(message);
        Assert.Equal(1, reader.ReadByte());
        int[]? rented = null;
        ReadOnlySpan<int> span = reader.ReadSpanInPlace(ref rented);

        Assert.NotNull(rented);
        Assert.False(MemoryMarshal.AsBytes(span).Overlaps(message));
        Assert.Equal(s_values, span.ToArray());
        reader.EnsureFullyConsumed();

        // Bytes have no alignment: the same layout reads in place.
        byte[] bytes = Wire.Encode((ref MarshalWriter w) =>
        {
            w.WriteByte(1);
            w.WriteSpan<byte>(message);
        });
        var byteReader = new MarshalReader(bytes);
        byteReader.ReadByte();
        byte[]? rentedBytes = null;
        ReadOnlySpan<byte> byteSpan = byteReader.ReadSpanInPlace(ref rentedBytes);
        Assert.Null(rentedBytes);
        Assert.True(byteSpan.Overlaps(bytes));
        Assert.Equal(message, byteSpan.ToArray());
    }

    [Fact]
    public void Values_split_across_chunks_are_copied_into_a_rented_array()
    {
        byte[] message = Wire.Encode((ref MarshalWriter w) => w.WriteSpan<int>(s_values));
        var input = new KeptChunks(message, 1000);
        var reader = new MarshalReader(input.First, message.Length, input);
        int[]? rented = null;
        ReadOnlySpan<int> span = reader.ReadSpanInPlace(ref rented);

        Assert.NotNull(rented);
        Assert.True(rented.Length >= s_values.Length);
        Assert.Equal(s_values, span.ToArray());
        reader.EnsureFullyConsumed();
    }

    [Fact]
    public void Null_and_empty_read_as_an_empty_span()
    {
        foreach (int[]? value in new[] { null, Array.Empty<int>() })
        {
            byte[] message = Wire.Encode((ref MarshalWriter w) => w.WriteArray(value));
            var reader = new MarshalReader(message);
            int[]? rented = null;
            Assert.True(reader.ReadSpanInPlace(ref rented).IsEmpty);
            Assert.Null(rented);
            reader.EnsureFullyConsumed();
        }
    }

    [Fact]
    public void A_length_beyond_the_message_or_the_limits_is_a_protocol_error()
    {
        byte[] message = Wire.Encode((ref MarshalWriter w) => w.WriteSpan<int>(s_values));
        byte[] truncated = message[..^4];
        Assert.Throws<XCallProtocolException>(() =>
        {
            var reader = new MarshalReader(truncated);
            int[]? rented = null;
            reader.ReadSpanInPlace(ref rented);
        });
        var limits = new MarshalLimits { MaxCollectionCount = 999 };
        Assert.Throws<XCallProtocolException>(() =>
        {
            var reader = new MarshalReader(message, limits);
            int[]? rented = null;
            reader.ReadSpanInPlace(ref rented);
        });
    }

    [Fact]
    public void A_block_of_more_than_2_GiB_claimed_by_a_small_chunk_is_never_a_view()
    {
        // 300 M longs = 2.4 GB: the byte count passes int.MaxValue. Even with the limits raised that far and
        // 3 GB said to follow, the span must not be built over the chunk, nor 2.4 GB rented: a protocol error.
        byte[] buffer = new byte[64];
        BitConverter.TryWriteBytes(buffer.AsSpan(4), 300_000_000); // values at offset 8: aligned for long
        Assert.Throws<XCallProtocolException>(() =>
        {
            var reader = new MarshalReader(buffer.AsSpan(4, 20), 3_000_000_000L, new KeptChunks([], 0), new MarshalLimits { MaxBlockBytes = long.MaxValue });
            long[]? rented = null;
            reader.ReadSpanInPlace(ref rented);
        });
        Assert.Throws<XCallProtocolException>(() =>
        {
            var reader = new MarshalReader(buffer.AsSpan(4, 20), 3_000_000_000L, new KeptChunks([], 0), new MarshalLimits { MaxBlockBytes = long.MaxValue });
            reader.ReadArray<long>(); // (an OverflowException before)
        });
    }

    /// <summary>A message in two chunks that both stay readable (as a transport keeps a frame until handled).</summary>
    private sealed class KeptChunks(byte[] message, int split) : IMarshalInput
    {
        private bool _served;

        public byte[] First { get; } = message[..split];

        public ReadOnlySpan<byte> NextChunk()
        {
            if (_served)
            {
                return default;
            }
            _served = true;
            return message.AsSpan(split);
        }
    }
}
